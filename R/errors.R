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
#' @param ... Must be empty.
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
#'     model$predict(numpy_array(matrix(0, 8, 4)), verbose = 0L)
#'   ),
#'   kerasmesh_error_model_placement = function(e) e
#' )
#' class(err)
#' set_distribution(old)
with_kerasmesh_errors <- function(code, ...) {
  check_call()
  with_python_errors(code)
}

# An R array reticulate can't convert to NumPy (see
# is_numpy_version_error()): the way out is numpy_array() and r_array().
abort_array_conversion <- function(e, call) {
  kerasmesh_abort(
    c("R arrays can't be passed to Python here: reticulate before 1.38
       can't convert them to NumPy 2 arrays.",
      x = cli_escape(first_lines(conditionMessage(e), 1)),
      i = "Make the arrays with {.fn numpy_array}, as in
           {.code model$fit(numpy_array(x), numpy_array(y))}, and bring
           results back with {.fn r_array}.",
      i = "Or update reticulate: from 1.38 it converts NumPy 2 arrays."),
    kind = kinds$array_conversion, call = call
  )
}

kerasmesh_abort <- function(message, kind, ..., call = rlang::caller_env(),
                            .envir = parent.frame()) {
  cli::cli_abort(
    message,
    class = error_classes(kind),
    ...,
    call = call,
    trace = if (isTRUE(getOption("kerasmesh.empty_trace"))) the$empty_trace,
    .envir = .envir
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
    class = warning_classes(kind),
    ...,
    .envir = .envir
  )
}

# Turns the shim's error description into an R condition.
abort_from_python <- function(result, call) {
  bullets <- python_bullets(result$bullets)
  if (identical(result$kind, "python")) {
    message <- c(
      "Python raised {.cls {python_type}}.",
      x = cli_escape(result$message)
    )
  } else {
    message <- c(cli_escape(result$message), bullets)
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
  kerasmesh_warn(c(cli_escape(w[[2]]), python_bullets(w[[3]])), kind = w[[1]])
}

# The shim's bullets, each list(name, text) or list(name, text, fact), as
# a named character vector ready for cli. A fact describes a value the user
# passed (errors.value_fact() in the shim); its words take the place of
# "{value}" in the text.
python_bullets <- function(bullets) {
  text <- vapply(bullets, function(b) {
    if (length(b) < 3) b[[2]] else fill_value(b[[2]], value_words(b[[3]]))
  }, character(1))
  names(text) <- vapply(bullets, function(b) b[[1]], character(1))
  cli_escape(text)
}

fill_value <- function(text, words) {
  at <- regexpr("{value}", text, fixed = TRUE)
  if (at < 0) {
    return(text)
  }
  paste0(substr(text, 1, at - 1), words,
         substr(text, at + nchar("{value}"), nchar(text)))
}

# A value the user passed, in R's words, from the shim's fact about it:
# `list(type =, length =, values =, names =, class =)`, where values are
# the first few elements (NULL for NA; a nested list is its own fact,
# without values). Types: "null"; "character", "numeric", "logical" (a
# vector of that type, NA allowed); "list", "tuple", "named_list";
# "object". A vector is worded as kerasmesh's R checks word one ("a
# string", "a number"), with its values; the others
# as "a list of 2 values: NULL, 3", "a named list of 1 value: a = 1",
# "an object of class <module.Class>".
value_words <- function(fact) {
  n <- fact$length
  type <- fact$type
  if (identical(type, "null")) {
    return("NULL")
  }
  if (identical(type, "object")) {
    return(paste0("an object of class <", fact$class, ">"))
  }
  if (type %in% c("character", "numeric", "logical")) {
    return(vector_words(fact))
  }
  if (n == 0) {
    return(paste("an empty", value_noun(type)))
  }
  values <- vapply(fact$values, preview_words, character(1))
  if (!is.null(fact$names)) {
    values <- paste(fact$names, "=", values)
  }
  shown <- paste(c(values, if (n > length(values)) "..."), collapse = ", ")
  paste0(cli::pluralize("a {value_noun(type)} of {n} value{?s}"), ": ",
         shown)
}

# An R vector rebuilt from a fact's values (NULL is NA), its type worded
# as the R checks word it, then the values: "a string ("x")", "a number
# (3)", "a character vector (NA, "model")", "a double vector (1, 2, ...)".
vector_words <- function(fact) {
  x <- unlist(lapply(fact$values, function(v) if (is.null(v)) NA else v))
  if (identical(fact$type, "character")) {
    x <- as.character(x)
  } else if (identical(fact$type, "numeric") && length(x) == 1) {
    # A whole number reaches the shim as a Python int (R's `2` as much as
    # `2L`): said as R says a number.
    x <- as.double(x)
  }
  words <- cli::format_inline("{.obj_type_friendly {x}}")
  if (grepl("`", words, fixed = TRUE)) {
    return(words) # `TRUE`, `NA`: the value is in the words
  }
  shown <- vapply(as.list(x), preview_words, character(1))
  shown <- c(shown, if (fact$length > length(x)) "...")
  paste0(words, " (", paste(shown, collapse = ", "), ")")
}

value_noun <- function(type) {
  switch(type, named_list = "named list",
         character = , numeric = , logical = paste(type, "vector"), type)
}

# One previewed element: a value as R prints it, NULL, or a nested
# value's fact in angle brackets.
preview_words <- function(x) {
  if (is.null(x)) {
    return("NULL")
  }
  if (is.atomic(x) && is.na(x) && !is.nan(x)) {
    return("NA")
  }
  if (is.list(x)) {
    return(paste0("<", nested_words(x), ">"))
  }
  if (is.character(x)) {
    return(encodeString(x, quote = "\""))
  }
  format(x)
}

nested_words <- function(fact) {
  switch(fact$type,
    null = "NULL",
    object = fact$class,
    paste(value_noun(fact$type), "of length", fact$length)
  )
}

cli_escape <- function(x) {
  x <- gsub("{", "{{", x, fixed = TRUE)
  x <- gsub("}", "}}", x, fixed = TRUE)
  times_to_ascii(x)
}
