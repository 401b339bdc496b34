#' Is Python with Keras and JAX available to kerasmesh?
#'
#' Finds Python the way kerasmesh does (see [kerasmesh-package]) and checks
#' that the `keras` and `jax` modules can be imported. It starts Python if
#' it has not started yet, but does not import Keras.
#'
#' @return `TRUE` or `FALSE`.
#' @export
#' @examples
#' keras_available()
keras_available <- function() {
  ok <- tryCatch(
    {
      configure_python()
      reticulate::py_module_available("keras") &&
        reticulate::py_module_available("jax")
    },
    error = function(e) FALSE
  )
  isTRUE(ok)
}

# The bridge: every call into the shim goes through shim_call(), which loads
# the shim on first use and turns Python errors into R conditions.
the <- new.env(parent = emptyenv())

kerasmesh_venv <- function() {
  path.expand(Sys.getenv("KERASMESH_VENV", "~/.virtualenvs/r-keras"))
}

configure_python <- function() {
  if (!nzchar(Sys.getenv("KERAS_BACKEND"))) {
    Sys.setenv(KERAS_BACKEND = "jax")
  }
  if (reticulate::py_available(initialize = FALSE) ||
      nzchar(Sys.getenv("RETICULATE_PYTHON"))) {
    return(invisible())
  }
  venv <- kerasmesh_venv()
  if (dir.exists(venv)) {
    reticulate::use_virtualenv(venv, required = TRUE)
  }
  invisible()
}

shim <- function(call = rlang::caller_env()) {
  if (is.null(the$shim)) {
    configure_python()
    if (!reticulate::py_module_available("keras")) {
      kerasmesh_abort(
        c("kerasmesh needs Python with the {.pkg keras} module.",
          x = "Python at {.path {python_path()}} has no {.pkg keras}.",
          i = "Run {.code make setup}, or point {.envvar KERASMESH_VENV}
               at a virtualenv with keras and jax."),
        kind = "no_keras", call = call
      )
    }
    the$shim <- reticulate::import_from_path(
      "kerasmesh",
      path = system.file("python", package = "kerasmesh"),
      convert = TRUE
    )
  }
  the$shim
}

python_path <- function() {
  config <- tryCatch(reticulate::py_config(), error = function(e) NULL)
  if (is.null(config)) "(none found)" else config$python
}

# Calls "module.function" in the shim; returns its plain value or signals
# the error it describes.
shim_call <- function(name, ..., call = rlang::caller_env()) {
  result <- with_python_errors(shim(call)$call(name, ...), call = call)
  if (!isTRUE(result$ok)) {
    abort_from_python(result, call)
  }
  result$value
}

python_started <- function() {
  reticulate::py_available(initialize = FALSE)
}

# Registered for reticulate::r_to_py() when reticulate loads (see zzz.R), so
# that library(kerasmesh) does not load reticulate (over a second, through
# its S4 imports).
r_to_py.kerasmesh_object <- function(x, convert = FALSE) {
  .subset2(x, "py")
}

# Registers a method for another package's generic once that package is
# loaded, without loading it now.
register_s3_method <- function(package, generic, class) {
  method <- get(paste0(generic, ".", class), envir = topenv())
  register <- function(...) {
    registerS3method(generic, class, method, envir = asNamespace(package))
  }
  if (isNamespaceLoaded(package)) {
    register()
  }
  setHook(packageEvent(package, "onLoad"), register)
}

# Value conversion between R and Python ------------------------------------

# An R vector as a list for Python, with NA as None.
na_to_null <- function(x) {
  out <- as.list(x)
  out[is.na(x)] <- list(NULL)
  out
}

# Layout axes from Python (None, a name, or several names) as a character
# vector: NA for an unsplit dimension, several names joined with "+".
axes_from_python <- function(x) {
  vapply(x, function(a) {
    if (is.null(a)) NA_character_ else paste(unlist(a), collapse = "+")
  }, character(1), USE.NAMES = FALSE)
}

# Sizes from Python as integers, or doubles when they overflow R's integers.
whole_numbers <- function(x) {
  x <- as.numeric(unlist(x))
  if (all(x <= .Machine$integer.max)) as.integer(x) else x
}
