#' Turn Python errors into kerasmesh conditions
#'
#' Runs `code` and turns a Python exception raised in it into an R
#' condition of the kerasmesh classes: `kerasmesh_error_<kind>` (and
#' `kerasmesh_error`) for kerasmesh's own checks, such as
#' `kerasmesh_error_model_placement` from a guarded `fit()`, and
#' `kerasmesh_error_python` for any other Python error. Errors from R pass
#' through unchanged.
#'
#' [with_distribution()] does this for the code it runs. A Keras method
#' called directly, such as `model$fit()` after [set_distribution()], goes
#' from R straight to Python: kerasmesh can't see the call, and its error
#' reaches R as reticulate signals it (class `Rcpp::exception` on
#' reticulate 1.28, `python.builtin.<Type>` from 1.29). Wrapping the call
#' gives the classed condition on every version; the original Python type
#' and traceback are kept in the condition's `python_type` and
#' `python_traceback` fields.
#'
#' @param code Code that calls Python, such as `model$fit(...)`.
#' @return The value of `code`.
#' @seealso [set_distribution()].
#' @export
#' @examplesIf keras_available()
#' simulate_devices(8)
#' library(reticulate, include.only = "import")
#' keras <- import("keras")
#' # Built before the distribution, so its weights live on one device.
#' model <- keras$Sequential(list(keras$Input(shape = list(4L)),
#'                                keras$layers$Dense(2L)))
#' old <- set_distribution(data_parallel())
#' err <- tryCatch(
#'   with_kerasmesh_errors(
#'     model$predict(np_array(matrix(0, 8, 4)), verbose = 0L)
#'   ),
#'   kerasmesh_error_model_placement = function(e) e
#' )
#' class(err)
#' set_distribution(old)
with_kerasmesh_errors <- function(code) {
  with_python_errors(code)
}

kerasmesh_abort <- function(message, kind, ..., call = rlang::caller_env(),
                            .envir = parent.frame()) {
  cli::cli_abort(
    message,
    class = c(paste0("kerasmesh_error_", kind), "kerasmesh_error"),
    ...,
    call = call,
    trace = if (isTRUE(getOption("kerasmesh.empty_trace"))) the$empty_trace,
    .envir = .envir
  )
}

# "`arg` must be <what>.", what was received, and a way out: the error for
# an argument of the wrong kind of object.
abort_wrong_object <- function(x, what, way_out, kind, arg, call) {
  kerasmesh_abort(
    c("{.arg {arg}} must be {what}.",
      x = "Received {.obj_type_friendly {x}}.",
      i = way_out),
    kind = kind, call = call
  )
}

# A backtrace of one frame, for errors whose real backtrace can't be
# summarised (see local_python_value_in_call()). Made once when the package
# loads: rlang summarises the whole call stack before it trims it.
empty_trace <- function() {
  rlang::trace_back(top = environment(), bottom = environment())
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

# Signals a warning the shim described as list(kind, message, bullets).
warn_from_python <- function(w) {
  bullets <- vapply(w[[3]], function(b) b[[2]], character(1))
  names(bullets) <- vapply(w[[3]], function(b) b[[1]], character(1))
  kerasmesh_warn(c(cli_escape(w[[2]]), cli_escape(bullets)), kind = w[[1]])
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
