#' kerasmesh: device meshes and layout maps for Keras 3
#'
#' kerasmesh wraps the Keras 3 distribution API for R. Build a
#' [device_mesh()], give variables layouts with a [layout_map()], and pass
#' both straight to Keras: `r_to_py()` (reticulate's) on a kerasmesh object
#' returns the Keras object it wraps.
#'
#' @section Which Python:
#' `library(kerasmesh)` does not start Python; the first function that needs
#' it does, and uses the first of these that exists:
#' 1. a Python that has already started in the session;
#' 2. the Python `RETICULATE_PYTHON` names;
#' 3. the virtualenv `KERASMESH_VENV` names (an error if it doesn't exist);
#' 4. the `r-keras` virtualenv under `reticulate::virtualenv_root()`
#'    (usually `~/.virtualenvs/r-keras`), which [install_kerasmesh()] and
#'    keras3's `install_keras()` create;
#' 5. reticulate's own choice. From reticulate 1.41 that is its managed
#'    Python: an environment it builds with uv, when Python first starts,
#'    from the packages declared with `reticulate::py_require()`.
#'    kerasmesh declares Keras, JAX and Orbax there (as minimum versions)
#'    when reticulate loads, unless Python has already started; keras3
#'    declares its own. `reticulate::py_require()` with no arguments lists
#'    what is declared.
#'
#' @section The Keras backend:
#' Keras 3's distribution API is implemented for the JAX backend, and every
#' kerasmesh function that can start Keras or uses the distribution API
#' checks the backend first. Loading kerasmesh changes no environment
#' variable, so the order of `library(keras3)` and `library(kerasmesh)`
#' makes no difference. The rule:
#' * Keras starts on the backend `KERAS_BACKEND` names. keras3 sets it to
#'   `"tensorflow"` when it loads and finds it unset, and
#'   `keras3::use_backend("jax")` sets it to `"jax"` (and declares `jax`
#'   instead of `tensorflow` for reticulate's managed Python).
#' * When `KERAS_BACKEND` is unset at the moment kerasmesh first starts
#'   Python or Keras, kerasmesh sets it to `"jax"`. [simulate_devices()]
#'   counts as that moment, although it starts nothing: called before
#'   anything else starts Python, it sets `KERAS_BACKEND` to `"jax"` (when
#'   unset) and chooses kerasmesh's Python, so that code which then imports
#'   Keras itself (`reticulate::import("keras")`) starts it on JAX. A script
#'   whose first line after `library(kerasmesh)` imports Keras directly
#'   gets Keras's own default instead: start it with `simulate_devices()`
#'   or another kerasmesh call.
#' * Otherwise a backend other than JAX is an error of class
#'   `kerasmesh_error_backend`, which names the backend and the way out:
#'   `keras3::use_backend("jax")` or `Sys.setenv(KERAS_BACKEND = "jax")`
#'   before Keras starts, after restarting R if it has started already.
#'   A choice is `KERAS_BACKEND`, set by you, by keras3 when it loads or
#'   by `keras3::use_backend()`. The backend in `keras.json` (in
#'   `KERAS_HOME`, by default ~/.keras) is not a choice kerasmesh sees:
#'   Keras writes it itself on its first import, with its own default
#'   (`"tensorflow"`), so it can't tell a user's choice from Keras's; the
#'   `KERAS_BACKEND` kerasmesh sets overrides it.
#'
#' [simulate_devices()], [keras_available()], [install_kerasmesh()] and
#' printing existing kerasmesh objects work whatever the backend.
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
#' @examples
#' # What kerasmesh would install or declare, without starting Python:
#' kerasmesh:::python_requirements()
#' @keywords internal
#' @importFrom rlang %||%
"_PACKAGE"
