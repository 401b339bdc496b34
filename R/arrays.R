#' Move arrays between R and Keras
#'
#' reticulate before 1.38 cannot convert NumPy 2 arrays in either direction
#' (Debian 12 ships 1.28), and later versions convert them to R arrays when
#' they come back, so R matrices can't be passed to `fit()` the same way on
#' every version. `numpy_array()` builds the NumPy array in Python from R's
#' values and hands it back unconverted, on every reticulate version;
#' `r_array()` brings an array Keras returns (`predict()`'s) back as an R
#' array, and `variable_values()` reads a model's variables back as R
#' arrays. (`as.array()` leaves a NumPy array unchanged on reticulate
#' before 1.38.) There, an R array passed to Keras inside
#' [with_distribution()] or [with_kerasmesh_errors()] is an error of class
#' `kerasmesh_error_array_conversion` that names these functions.
#'
#' `numpy_array()` is not reticulate's (and keras3's) `np_array()`, which
#' keeps R's type (doubles become float64) and accepts any R array: it
#' defaults to float32, checks values against the dtype and takes only
#' numbers and logicals. Earlier versions of kerasmesh called it `np_array()`,
#' and masked theirs when attached after keras3 or reticulate.
#'
#' Nothing changes silently on the way: `NA` in integer or logical input is
#' an error (reticulate would turn it into -2147483648 or `TRUE`), as is a
#' value the dtype can't hold (`NA`, a fraction or an out-of-range number
#' for an integer dtype; an overflow for a floating one). `NA` and `NaN` in
#' double input become NaN in a floating dtype. Whole numbers a floating
#' dtype rounds (beyond 2^24 for float32) give a warning of class
#' `kerasmesh_warning_array_precision`.
#'
#' @param x A numeric or logical vector, matrix or array. A vector becomes
#'   a 1-D array.
#' @param dtype A NumPy dtype name (or `"bfloat16"`).
#' @param ... Must be empty.
#' @return `numpy_array()`: a NumPy array (a Python object, class
#'   `numpy.ndarray`) with the same dimensions and element order as `x`.
#'   It is held without conversion, so its attributes and methods return
#'   Python objects too (`x$shape` is a Python tuple); convert them with
#'   reticulate for R values. `variable_values()`: a named list of numeric
#'   arrays, one per variable, named by path.
#' @export
#' @examplesIf keras_available()
#' x <- numpy_array(matrix(1:6, nrow = 2))
#' x$shape
#' # NA in integers can't become a number silently; doubles keep it as NaN.
#' try(numpy_array(c(1L, NA, 3L)))
#' numpy_array(as.double(c(1L, NA, 3L)))
numpy_array <- function(x, dtype = "float32", ...) {
  check_call()
  check_numbers(x)
  check_string(dtype)
  check_no_na(x)
  as_numpy(x, dtype)
}

check_numbers <- function(x, arg = rlang::caller_arg(x),
                          call = rlang::caller_env()) {
  if (!is.numeric(x) && !is.logical(x)) {
    stop_input_type(x, "a numeric vector, matrix or array", show_value = FALSE,
                    kind = kinds$array, arg = arg, call = call)
  }
  invisible(x)
}

# A NumPy array of `x`'s values. Where `x` holds rows of the user's array
# `arg` (`rows` of its `n_rows`, NULL for all), a value the dtype can't
# hold is named at its position there.
as_numpy <- function(x, dtype, arg = NULL, rows = NULL, n_rows = NULL,
                     call = rlang::caller_env()) {
  dims <- dim(x) %||% length(x)
  shim_object("arrays.as_array", values = as.vector(x),
              shape = as.list(dims), dtype = dtype, arg = arg,
              rows = if (!is.null(rows)) as.list(rows), n_rows = n_rows,
              call = call)
}

#' @rdname numpy_array
#' @param model A Keras model.
#' @export
variable_values <- function(model, ...) {
  check_call()
  check_python_object(model, "a Keras model", kind = kinds$model)
  values <- shim_call("arrays.variable_values", model = model)
  out <- Map(function(shape, v) {
    row_major_array(as.numeric(unlist(v)), shape)
  }, values$shapes, values$values)
  names(out) <- as.character(unlist(values$paths))
  out
}

#' @rdname numpy_array
#' @param array What Keras returned: a NumPy array (such as `predict()`'s
#'   result), a JAX array or a Keras tensor, or a list of them (a model
#'   with several outputs). An R array or vector (what reticulate >= 1.38
#'   makes of a NumPy array) is returned as it is, and so is `NULL` in a
#'   list (such as [process_data()]'s `y` without labels).
#' @return `r_array()`: an R array with the dimensions of `array` (a
#'   vector for one dimension, a matrix for two), of type logical, integer
#'   (or double, for integers R's can't hold) or double; a list of them
#'   for a list or dictionary of arrays.
#' @export
#' @examplesIf keras_available()
#' keras <- reticulate::import("keras")
#' model <- keras$Sequential(list(keras$Input(shape = list(3L)),
#'                                keras$layers$Dense(2L)))
#' pred <- model$predict(numpy_array(matrix(1, 4, 3)), verbose = 0L)
#' r_array(pred) # a 4 x 2 matrix, on every reticulate version
r_array <- function(array, ...) {
  check_call()
  if (!inherits(array, "python.builtin.object")) {
    # NULL: an element left out (process_data()'s `y` without labels).
    if (is.null(array) || is.numeric(array) || is.logical(array)) {
      return(array)
    }
    if (is.list(array) && !is.object(array)) {
      return(lapply(array, r_array))
    }
    stop_input_type(array, "a NumPy array or a list of them",
                    show_value = FALSE, kind = kinds$array)
  }
  r_value(shim_call("arrays.to_r", x = array))
}

# An R value from arrays.to_r()'s description.
r_value <- function(desc) {
  if (!is.null(desc$items)) {
    out <- lapply(desc$items, r_value)
    if (!is.null(desc$names)) names(out) <- as.character(unlist(desc$names))
    return(out)
  }
  values <- unlist(desc$values) %||% vector(desc$type, 0)
  storage.mode(values) <- desc$type
  row_major_array(values, desc$shape)
}

# Row-major (C order) values of an array of `shape` as an R array: a vector
# for up to one dimension.
row_major_array <- function(values, shape) {
  shape <- as.integer(unlist(shape))
  if (length(shape) <= 1) {
    return(values)
  }
  aperm(array(values, dim = rev(shape)), rev(seq_along(shape)))
}

# Integer and logical NA have no NaN: reticulate would pass them as
# -2147483648 and TRUE.
check_no_na <- function(x, arg = rlang::caller_arg(x),
                        call = rlang::caller_env()) {
  if (is.double(x) || !anyNA(x)) {
    return(invisible(x))
  }
  where <- which(is.na(x))
  n <- length(where)
  shown <- paste(utils::head(where, 5), collapse = ", ")
  if (n > 5) {
    shown <- paste0(shown, ", and ", n - 5, " more")
  }
  # nolint start: object_usage_linter. `type` is read by cli.
  type <- if (is.logical(x)) "logical" else "integer"
  # nolint end
  kerasmesh_abort(
    c("{.arg {arg}} can't contain {.code NA}: {type} arrays have no
       missing value.",
      x = "{.code NA} at {cli::qty(n)}position{?s} {shown}.",
      i = "{.code as.double({arg})} keeps {.code NA} as NaN, if that is
           what you mean; or remove or replace the missing values."),
    kind = kinds$array_na, call = call
  )
}
