#' Move arrays between R and Keras
#'
#' reticulate before 1.38 cannot convert NumPy 2 arrays in either direction
#' (Debian 12 ships 1.28), so R matrices can't be passed to `fit()` as they
#' are. `np_array()` builds the NumPy array in Python from R's values;
#' `variable_values()` reads a model's variables back as R arrays.
#'
#' @param x A numeric vector, matrix or array. A vector becomes a 1-D array.
#' @param dtype A NumPy dtype name.
#' @return `np_array()`: a NumPy array (a Python object) with the same
#'   dimensions and element order as `x`. `variable_values()`: a named list
#'   of numeric arrays, one per variable, named by path.
#' @export
#' @examplesIf keras_available()
#' x <- np_array(matrix(1:6, nrow = 2))
#' x$shape
np_array <- function(x, dtype = "float32") {
  if (!is.numeric(x) && !is.logical(x)) {
    kerasmesh_abort(
      c("{.arg x} must be a numeric vector, matrix or array.",
        x = "Received {.obj_type_friendly {x}}."),
      kind = "array"
    )
  }
  check_string(dtype)
  dims <- dim(x) %||% length(x)
  shim_call("arrays.as_array", as.vector(x), as.list(dims), dtype)
}

#' @rdname np_array
#' @param model A Keras model.
#' @export
variable_values <- function(model) {
  values <- shim_call("arrays.variable_values", model)
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
