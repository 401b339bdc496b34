#' Is Python with Keras and JAX available to kerasmesh?
#'
#' Finds Python the way kerasmesh does (see [kerasmesh-package]) and checks
#' that the `keras` and `jax` modules are installed there. It starts Python
#' if it has not started yet, but does not import Keras. Starting Python
#' counts as kerasmesh starting it: with no backend chosen
#' (`KERAS_BACKEND` unset), `KERAS_BACKEND` becomes `"jax"`.
#'
#' @param ... Must be empty.
#' @return `TRUE` or `FALSE`.
#' @export
#' @examples
#' keras_available()
keras_available <- function(...) {
  check_dots_none()
  ok <- tryCatch(
    {
      configure_python()
      python_has_module("keras") && python_has_module("jax")
    },
    error = function(e) FALSE
  )
  isTRUE(ok)
}

# The bridge: every call into the shim goes through shim_call(), which loads
# the shim on first use and turns Python errors into R conditions.
the <- new.env(parent = emptyenv())

# Python, found in this order (documented in ?kerasmesh and the README):
# a Python that has already started; `RETICULATE_PYTHON`; the virtualenv
# `KERASMESH_VENV` names; the `r-keras` virtualenv when it exists (the one
# install_kerasmesh() and keras3::install_keras() create); otherwise
# reticulate's own choice, which from reticulate 1.41 is an environment
# it makes with uv from the requirements packages declare with
# py_require() (kerasmesh's among them, see zzz.R).
configure_python <- function() {
  if (python_started()) {
    return(invisible())
  }
  # kerasmesh starts Python: with no backend chosen, JAX (see backend.R).
  choose_backend()
  if (nzchar(Sys.getenv("RETICULATE_PYTHON"))) {
    return(invisible())
  }
  venv <- kerasmesh_venv()
  if (!is.null(venv)) {
    reticulate::use_virtualenv(venv, required = TRUE)
  }
  invisible()
}

# The virtualenv kerasmesh uses: `KERASMESH_VENV` (which must exist) when
# set, else the `r-keras` virtualenv when it exists, else NULL.
kerasmesh_venv <- function(call = rlang::caller_env()) {
  explicit <- Sys.getenv("KERASMESH_VENV")
  if (nzchar(explicit)) {
    path <- path.expand(explicit)
    if (!dir.exists(path)) {
      kerasmesh_abort(
        c("{.envvar KERASMESH_VENV} must name a virtualenv.",
          x = "{.path {path}} does not exist.",
          i = "Create it with {.code install_kerasmesh({.str {path}})}, or
               unset {.envvar KERASMESH_VENV}."),
        kind = kinds$no_keras, call = call
      )
    }
    return(path)
  }
  default <- default_venv()
  if (dir.exists(default)) default else NULL
}

default_venv <- function() {
  file.path(virtualenv_root(), "r-keras")
}

# Where reticulate keeps virtualenvs (WORKON_HOME, usually ~/.virtualenvs).
virtualenv_root <- function() {
  reticulate::virtualenv_root()
}

has_py_require <- function() {
  utils::packageVersion("reticulate") >= "1.41"
}

# Declares kerasmesh's packages to reticulate's managed Python (reticulate
# >= 1.41), run when reticulate loads (zzz.R). Never after Python has
# started: reticulate would build a new environment at once, downloading.
# py_require() is reached through getExportedValue(): reticulate 1.28 has
# none, and naming it directly is an R CMD check warning there.
declare_python_requirements <- function() {
  if (!has_py_require() || reticulate::py_available(initialize = FALSE)) {
    return(invisible(FALSE))
  }
  py_require <- getExportedValue("reticulate", "py_require")
  py_require(python_requirements(pinned = FALSE), python_version = ">=3.11")
  invisible(TRUE)
}

# The shim, imported twice: `convert = TRUE` for plain values (shim_call())
# and `convert = FALSE` for Python objects that stay Python (shim_object()).
shim <- function(call = rlang::caller_env(), convert = TRUE) {
  handle <- if (convert) "shim" else "shim_objects"
  if (!convert) {
    shim(call) # the converting handle first: it registers R's warnings
  }
  if (is.null(the[[handle]])) {
    configure_python()
    for (module in c("keras", "jax")) {
      if (!python_has_module(module)) {
        abort_missing_module(module, call)
      }
    }
    the[[handle]] <- reticulate::import_from_path(
      "kerasmesh",
      path = system.file("python", package = "kerasmesh"),
      convert = convert
    )
    if (convert) {
      signal_from_python(
        the[[handle]]$call("session.start", r_warning = signal_python_warning,
                           r_keeps_gil = r_keeps_gil()),
        call
      )
    }
  }
  the[[handle]]
}

# Whether R's main thread keeps Python's lock (the GIL) while it runs R
# code: reticulate before 1.39 does, so that Python threads stop whenever
# R returns from Python; the shim then hooks R's event loop to keep them
# running (core/r_events.py).
r_keeps_gil <- function() {
  utils::packageVersion("reticulate") < "1.39"
}

# Undoes the shim's start (session.start(): R's warning function, SIGPIPE
# ignored as Python ignores it) when kerasmesh is unloaded.
end_python_session <- function() {
  if (!is.null(the$shim)) try(the$shim$call("session.end"), silent = TRUE)
}

# Called by the shim (errors.warn()) for a warning raised outside a shim
# call, such as the training guard's in a `model$fit()` that R called
# directly: reticulate is the caller there, so the shim signals the R
# warning itself, through this function. Calling handlers
# (withCallingHandlers(), expect_warning(), suppressWarnings()) see it as
# any R warning; see ARCHITECTURE.md for exiting handlers.
signal_python_warning <- function(kind, message, bullets) {
  warn_from_python(list(kind, message, bullets))
  invisible(NULL)
}

# Python without a module kerasmesh needs (keras, jax): say which Python,
# and the ways to get the module. The shim words the same hint for Orbax
# (`checkpoint/files.py`'s `orbax()`).
abort_missing_module <- function(module, call) {
  managed <- if (has_py_require()) {
    c(i = "With reticulate's managed Python, start a new R session in which
           nothing has started Python before kerasmesh loads: kerasmesh
           declares its packages with {.code reticulate::py_require()}.")
  }
  kerasmesh_abort(
    c("kerasmesh needs Python with the {.pkg {module}} module.",
      x = "Python at {.path {python_path()}} has no {.pkg {module}}.",
      i = "Install kerasmesh's Python packages with
           {.code kerasmesh::install_kerasmesh()}, then restart R.",
      managed,
      i = "Or point {.envvar RETICULATE_PYTHON} or {.envvar KERASMESH_VENV}
           at a Python that has them."),
    kind = kinds$no_keras, call = call
  )
}

# Whether Python can import `module`, found without importing it (which
# reticulate's py_module_available() does): importing keras starts Keras,
# and so fixes its backend.
python_has_module <- function(module) {
  util <- reticulate::import("importlib.util")
  !is.null(util$find_spec(module))
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
# Both signal the shim's errors and warnings as kerasmesh conditions, and
# pass every argument after `name` by keyword (kerasmesh.call() takes no
# other), so that a signature reordered on either side fails loudly.
shim_call <- function(name, ..., call = rlang::caller_env()) {
  check_shim_args(name, ...names(), ...length())
  if (!backend_free_module(name)) {
    check_backend(call)
  }
  result <- with_python_errors(shim(call)$call(name, ...), call = call)
  signal_from_python(result, call)
  result$value
}

shim_object <- function(name, ..., call = rlang::caller_env()) {
  check_shim_args(name, ...names(), ...length())
  check_backend(call)
  result <- with_python_errors(
    shim(call, convert = FALSE)$call_object(name, ...),
    call = call
  )
  signal_from_python(reticulate::py_to_r(reticulate::py_get_item(result, 0L)),
                     call)
  reticulate::py_get_item(result, 1L)
}

# An argument without a name is a bug in kerasmesh, not the user's.
check_shim_args <- function(name, names, n) {
  if (n > 0 && (is.null(names) || !all(nzchar(names)))) {
    cli::cli_abort(
      "The shim call {.val {name}} must name every argument.",
      .internal = TRUE
    )
  }
  invisible()
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

# What a value is, in the shim's words (describe.object_type():
# "device_mesh", "layout_map", "distribution", "model", ..., "other"), so
# that no R code tests Keras's class paths, which Keras is free to move. An
# R value is "r" and does not start Python. (An object's type; a
# condition's kind is another thing, see kinds.R.)
object_type <- function(x) {
  if (!inherits(x, "python.builtin.object")) {
    return("r")
  }
  shim_call("describe.object_type", x = x)
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
      if (is_numpy_version_error(e)) {
        abort_array_conversion(e, call)
      }
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
    kind = kinds$python,
    python_type = last$type %||% "Exception",
    message = first_lines(last$value %||% conditionMessage(e)),
    bullets = list(),
    traceback = last$traceback
  )
}

# reticulate before 1.38 can't convert between R arrays and NumPy 2 arrays:
# "Required version of NumPy not available: incompatible NumPy binary
# version 33554432 (expecting version 16777225)", raised in R (and with
# no Python exception behind it) when an R array is passed to Python.
is_numpy_version_error <- function(e) {
  grepl("incompatible NumPy binary version", conditionMessage(e),
        fixed = TRUE)
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
# S3 methods of reticulate's generic, whatever lintr thinks of their names.
r_to_py.kerasmesh_object <- function(x, convert = FALSE) { # nolint
  check_unedited(x)
  object_py(x)
}

# A layout map goes as a copy: its rules can be changed in Python, and the
# R object, a value, must keep describing its own.
r_to_py.kerasmesh_layout_map <- function(x, convert = FALSE) { # nolint
  check_unedited(x)
  shim_call("layout.copy_layout_map", layout_map = object_py(x))
}

# The Keras object a kerasmesh object stands for, on its way to Python.
# One read back from a file (saveRDS(), a saved workspace) keeps its R
# fields, so it prints, but its Keras object ended with the session that
# made it: refused here, by name, rather than by reticulate.
object_py <- function(x, arg = rlang::caller_arg(x),
                      call = rlang::caller_env()) {
  py <- .subset2(x, "py")
  if (inherits(py, "python.builtin.object") &&
        reticulate::py_is_null_xptr(py)) {
    maker <- maker_text(x) # nolint: object_usage_linter. cli reads it.
    kerasmesh_abort(
      c("{.arg {arg}} must be made in this R session.",
        x = "It was read back from a file ({.fn saveRDS}, a saved
             workspace): its Keras object ended with the session that made
             it.",
        i = "Make it again with {maker}."),
      kind = kinds$argument, call = call
    )
  }
  py
}
