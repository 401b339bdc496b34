#' Move arrays between R and Keras
#'
#' reticulate before 1.38 cannot convert NumPy 2 arrays in either direction
#' (Debian 12 ships 1.28), and later versions convert them to R arrays when
#' they come back, so R matrices can't be passed to `fit()` the same way on
#' every version. `numpy_array()` builds the NumPy array in Python from R's
#' values and hands it back unconverted, on every reticulate version;
#' `variable_values()` reads a model's variables back as R arrays.
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
numpy_array <- function(x, dtype = "float32") {
  if (!is.numeric(x) && !is.logical(x)) {
    stop_input_type(x, "a numeric vector, matrix or array", show_value = FALSE,
                    kind = kinds$array)
  }
  check_string(dtype)
  check_no_na(x)
  dims <- dim(x) %||% length(x)
  shim_object("arrays.as_array", values = as.vector(x),
              shape = as.list(dims), dtype = dtype)
}

#' @rdname numpy_array
#' @param model A Keras model.
#' @export
variable_values <- function(model) {
  check_python_object(model, "a Keras model", kind = kinds$model)
  values <- shim_call("arrays.variable_values", model = model)
  out <- Map(function(shape, v) {
    shape <- as.integer(unlist(shape))
    v <- as.numeric(unlist(v))
    if (length(shape) <= 1) {
      return(v)
    }
    a <- array(v, dim = rev(shape))
    aperm(a, rev(seq_along(shape)))
  }, values$shapes, values$values)
  names(out) <- as.character(unlist(values$paths))
  out
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
