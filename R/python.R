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

# The shim, imported twice: `convert = TRUE` for plain values (shim_call())
# and `convert = FALSE` for Python objects that stay Python (shim_object()).
shim <- function(call = rlang::caller_env(), convert = TRUE) {
  handle <- if (convert) "shim" else "shim_objects"
  if (is.null(the[[handle]])) {
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
    the[[handle]] <- reticulate::import_from_path(
      "kerasmesh",
      path = system.file("python", package = "kerasmesh"),
      convert = convert
    )
  }
  the[[handle]]
}

python_path <- function() {
  config <- tryCatch(reticulate::py_config(), error = function(e) NULL)
  if (is.null(config)) "(none found)" else config$python
}

# Every call into the shim states what it returns, by the function it
# goes through:
# * shim_call(): plain values (NULL, logicals, numbers, strings, lists of
#   them) and Keras objects inside them. The shim checks that the result
#   holds no NumPy value (kerasmesh.plain()), so reticulate converts it the
#   same way on every version.
# * shim_object(): one Python object that stays Python (a NumPy array),
#   held through the `convert = FALSE` handle, so neither reticulate 1.28
#   (which can't convert NumPy 2 arrays) nor >= 1.38 (which converts them
#   to R arrays) changes it, and neither do its methods' results.
# Both signal the shim's errors and warnings as kerasmesh conditions.
shim_call <- function(name, ..., call = rlang::caller_env()) {
  result <- with_python_errors(shim(call)$call(name, ...), call = call)
  signal_from_python(result, call)
  result$value
}

shim_object <- function(name, ..., call = rlang::caller_env()) {
  result <- with_python_errors(
    shim(call, convert = FALSE)$call_object(name, ...),
    call = call
  )
  signal_from_python(reticulate::py_to_r(reticulate::py_get_item(result, 0L)),
                     call)
  reticulate::py_get_item(result, 1L)
}

# Raises the error the shim's envelope describes, or passes on its warnings.
signal_from_python <- function(result, call) {
  for (w in result$warnings) {
    warn_from_python(w)
  }
  if (!isTRUE(result$ok)) {
    abort_from_python(result, call)
  }
  invisible()
}

python_started <- function() {
  reticulate::py_available(initialize = FALSE)
}

# What a value is, in the shim's words (describe.kind_of(): "device_mesh",
# "layout_map", "distribution", "model", ..., "other"), so that no R code
# tests Keras's class paths, which Keras is free to move. An R value is
# "r" and does not start Python.
python_kind <- function(x) {
  if (!inherits(x, "python.builtin.object")) {
    return("r")
  }
  shim_call("describe.kind_of", x)
}

# Python errors ----------------------------------------------------------

# Runs `expr`, turning a Python exception raised by a direct reticulate call
# into a kerasmesh condition: `kerasmesh_error_<kind>` for the shim's own
# errors (raised, say, inside a guarded `fit()`), `kerasmesh_error_python`
# otherwise. reticulate 1.28 signals `Rcpp::exception`, newer versions
# `python.builtin.*` conditions; both leave the exception in py_last_error().
with_python_errors <- function(expr, call = rlang::caller_env()) {
  withCallingHandlers(
    expr,
    error = function(e) {
      if (is_python_error(e)) {
        abort_from_python(python_error_description(e), call)
      }
    }
  )
}

python_error_description <- function(e) {
  last <- tryCatch(reticulate::py_last_error(), error = function(err) NULL)
  exception <- attr(last, "exception") %||% last$exception %||%
    (if (inherits(e, "python.builtin.object")) e)
  kind <- if (!is.null(exception) &&
              reticulate::py_has_attr(exception, "kind")) {
    reticulate::py_to_r(reticulate::py_get_attr(exception, "kind"))
  }
  if (is.character(kind)) {
    return(list(
      kind = kind,
      python_type = last$type,
      message = reticulate::py_to_r(reticulate::py_get_attr(exception,
                                                             "message")),
      bullets = reticulate::py_to_r(reticulate::py_get_attr(exception,
                                                             "bullets")),
      traceback = last$traceback
    ))
  }
  list(
    kind = "python",
    python_type = last$type %||% "Exception",
    message = first_lines(last$value %||% conditionMessage(e)),
    bullets = list(),
    traceback = last$traceback
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

# Registered for reticulate::r_to_py() when reticulate loads (see zzz.R), so
# that library(kerasmesh) does not load reticulate (over a second, through
# its S4 imports).
# An S3 method of reticulate's generic, whatever lintr thinks of its name.
r_to_py.kerasmesh_object <- function(x, convert = FALSE) { # nolint
  .subset2(x, "py")
}

# Registers a method for another package's generic once that package is
# loaded, without loading it now.
register_s3_method <- function(package, generic, class,
                               method = get(paste0(generic, ".", class),
                                            envir = topenv())) {
  force(package)
  force(generic)
  force(class)
  force(method)
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

# Sizes from Python as integers, or doubles when they overflow R's integers.
whole_numbers <- function(x) {
  x <- as.numeric(unlist(x))
  if (all(x <= .Machine$integer.max)) as.integer(x) else x
}
