#' kerasmesh: device meshes and layout maps for Keras 3
#'
#' kerasmesh wraps the Keras 3 distribution API for R. Build a
#' [device_mesh()], give variables layouts with a [layout_map()], and pass
#' both straight to Keras: `r_to_py()` (reticulate's) on a kerasmesh object
#' returns the Keras object it wraps.
#'
#' @section Python and the Keras backend:
#' `library(kerasmesh)` does not start Python; the first function that needs
#' it does. kerasmesh uses the Python of `RETICULATE_PYTHON` when set,
#' otherwise the virtualenv in `KERASMESH_VENV` (default
#' `~/.virtualenvs/r-keras`, the one keras3's `install_keras()` creates).
#' Loading the package sets `KERAS_BACKEND=jax` unless a backend was chosen.
#'
#' Keras 3's distribution API is implemented for the JAX backend.
#' [list_devices()], [device_mesh()] and [layout_map()] also work on the
#' TensorFlow backend, which implements devices and meshes; everything else
#' that touches devices needs JAX and signals an error of class
#' `kerasmesh_error_backend` otherwise. [simulate_devices()],
#' [keras_available()], and printing or reading existing kerasmesh objects
#' work on any backend.
#'
#' @section Errors:
#' Every error kerasmesh signals has class `kerasmesh_error` and a specific
#' class such as `kerasmesh_error_mesh_shape`. Errors raised in Python have
#' class `kerasmesh_error_python` and carry the Python type and message in
#' the fields `python_type` and `python_message`. A Keras method called
#' directly from R (`model$fit()`) raises reticulate's own condition: wrap it
#' in [with_kerasmesh_errors()] for the kerasmesh classes.
#' [kerasmesh_conditions] lists every class.
#'
#' @keywords internal
#' @importFrom rlang %||%
"_PACKAGE"
