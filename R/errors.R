kerasmesh_abort <- function(message, kind, ..., call = rlang::caller_env(),
                            .envir = parent.frame()) {
  cli::cli_abort(
    message,
    class = c(paste0("kerasmesh_error_", kind), "kerasmesh_error"),
    ...,
    call = call,
    .envir = .envir
  )
}

kerasmesh_warn <- function(message, kind, ..., .envir = parent.frame()) {
  cli::cli_warn(
    message,
    class = c(paste0("kerasmesh_warning_", kind), "kerasmesh_warning"),
    ...,
    .envir = .envir
  )
}

# Turns the shim's error description into an R condition.
abort_from_python <- function(result, call) {
  bullets <- vapply(result$bullets, function(b) b[[2]], character(1))
  names(bullets) <- vapply(result$bullets, function(b) b[[1]], character(1))
  if (identical(result$kind, "python")) {
    message <- c(
      "Python raised {.cls {python_type}}.",
      x = cli_escape(result$message)
    )
  } else {
    message <- c(cli_escape(result$message), cli_escape(bullets))
  }
  python_type <- result$python_type
  kerasmesh_abort(
    message,
    kind = result$kind,
    python_type = python_type,
    python_message = result$message,
    python_traceback = result$traceback,
    call = call
  )
}

# Runs `expr`, turning a Python exception raised by a direct reticulate call
# into a `kerasmesh_error_python` condition. reticulate 1.28 signals
# `Rcpp::exception`, newer versions `python.builtin.*` conditions.
with_python_errors <- function(expr, call = rlang::caller_env()) {
  withCallingHandlers(
    expr,
    error = function(e) {
      if (!is_python_error(e)) {
        return()
      }
      last <- reticulate::py_last_error()
      python_type <- if (is.null(last$type)) "Exception" else last$type
      python_message <- if (is.null(last$value)) {
        conditionMessage(e)
      } else {
        last$value
      }
      kerasmesh_abort(
        c("Python raised {.cls {python_type}}.",
          x = cli_escape(first_lines(python_message))),
        kind = "python",
        python_type = python_type,
        python_message = python_message,
        python_traceback = last$traceback,
        call = call
      )
    }
  )
}

is_python_error <- function(e) {
  inherits(e, "Rcpp::exception") ||
    inherits(e, "python.builtin.BaseException")
}

first_lines <- function(x, n = 3) {
  lines <- strsplit(x, "\n", fixed = TRUE)[[1]]
  paste(utils::head(lines, n), collapse = "\n")
}

cli_escape <- function(x) {
  x <- gsub("{", "{{", x, fixed = TRUE)
  x <- gsub("}", "}}", x, fixed = TRUE)
  times_to_ascii(x)
}

# "2 × 4" in a UTF-8 console, "2 x 4" elsewhere.
times_symbol <- function() {
  if (cli::is_utf8_output()) "\u00d7" else "x"
}

times_to_ascii <- function(x) {
  if (cli::is_utf8_output()) x else gsub("\u00d7", "x", x, fixed = TRUE)
}
