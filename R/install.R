#' Install kerasmesh's Python packages
#'
#' Creates a Python virtualenv, or updates one, with the Python packages
#' kerasmesh needs (Keras, JAX and Orbax, at the versions kerasmesh is
#' tested with), as `keras3::install_keras()` does for keras3. The default
#' environment, `r-keras`, is the one keras3 uses too, and the one
#' kerasmesh finds without being told (see [kerasmesh-package]).
#'
#' Nothing is left half-installed: the packages are downloaded first, and
#' only installed once all of them are there, so a failed download leaves
#' an existing environment as it was. An update that fails while
#' installing (a package that can't be written, a full disk, an interrupt)
#' puts the environment back as it was, from a snapshot taken before it
#' started (hard links beside it, so nothing is copied); a new environment
#' that can't be completed is removed.
#'
#' With reticulate 1.41 or later you may not need this: kerasmesh declares
#' the same packages with `reticulate::py_require()` when reticulate loads,
#' and reticulate's managed Python installs them when Python first starts.
#'
#' @param envname The virtualenv: a name (created under
#'   `reticulate::virtualenv_root()`, usually `~/.virtualenvs`) or a path
#'   (containing `/`). By default `KERASMESH_VENV` when set, else
#'   `"r-keras"`.
#' @param python The Python to create a new environment with (3.11 or
#'   later, with a shared libpython, which reticulate needs to embed it).
#'   By default `python3` on the `PATH`. An existing environment keeps its
#'   own Python.
#' @param extra_packages More Python packages to install, as pip
#'   requirements such as `"keras-hub"`.
#' @param gpu_compiler Whether to install XLA's GPU compiler (JAX's CUDA
#'   plugin, `jax[cuda12]` at kerasmesh's JAX version, with NVIDIA's CUDA
#'   libraries: several GB). With it, [layout_cost()],
#'   [compare_layouts()] and [search_layout()] compile a step on a
#'   topology of GPUs for those GPUs, without them; without it, XLA's CPU
#'   compiler stands in. On a machine without GPUs kerasmesh starts JAX on
#'   the CPU, so the plugin finds no GPU to complain about. With
#'   reticulate's managed Python, declare it instead, before Python starts:
#'   `reticulate::py_require("jax[cuda12]==0.10.2")`.
#' @param ... Must be empty.
#' @return The path of the environment, invisibly.
#' @seealso `reticulate::py_require()` for reticulate's managed Python.
#' @export
#' @examples
#' # Where the packages would go, without installing anything:
#' kerasmesh:::venv_path("r-keras")
#' kerasmesh:::python_requirements()
#' kerasmesh:::gpu_compiler_requirement()
#' \dontrun{
#' install_kerasmesh()
#' }
install_kerasmesh <- function(envname = NULL, python = NULL,
                              extra_packages = NULL, gpu_compiler = FALSE,
                              ...) {
  check_dots_none()
  gpu_compiler <- check_flag(gpu_compiler)
  if (!is.null(envname)) check_string(envname)
  if (!is.null(python)) check_string(python)
  for (package in extra_packages) {
    check_string(package, arg = "extra_packages")
  }
  path <- venv_path(envname)
  done <- FALSE
  if (check_venv_target(path)) {
    backup <- venv_snapshot(path)
    on.exit(venv_restore(path, backup, done), add = TRUE)
  } else {
    python <- python %||% unname(Sys.which("python3"))
    check_python_for_venv(python)
    was_dir <- dir.exists(path) # empty: kept as it was on failure
    on.exit(if (!done) venv_remove(path, was_dir), add = TRUE)
    run_python(python, c("-m", "venv", path), "create the virtualenv",
               kind = kinds$install_python)
  }
  venv_python <- file.path(path, "bin", "python")
  check_python_for_venv(venv_python)
  requirements <- c(python_requirements(),
                    if (gpu_compiler) gpu_compiler_requirement(),
                    extra_packages)
  download_packages(venv_python, requirements)
  done <- TRUE
  if (python_started()) {
    cli::cli_inform(c(
      v = "Installed kerasmesh's Python packages in {.path {path}}.",
      i = "Restart R to use them: Python has already started here."
    ))
  } else {
    cli::cli_inform(c(
      v = "Installed kerasmesh's Python packages in {.path {path}}."
    ))
  }
  invisible(path)
}

# The requirements in inst/python/requirements.txt (the list
# tools/requirements.txt includes): pinned ("keras==3.15.1") for
# install_kerasmesh(), or as minimum versions ("keras>=3.15.1") for
# py_require(), which must not hold back a user's newer versions.
python_requirements <- function(pinned = TRUE) {
  path <- system.file("python", "requirements.txt", package = "kerasmesh")
  lines <- trimws(sub("#.*$", "", readLines(path, warn = FALSE)))
  lines <- lines[nzchar(lines)]
  if (pinned) lines else sub("==", ">=", lines, fixed = TRUE)
}

# XLA's GPU compiler at the pinned JAX's version: "jax[cuda12]==0.10.2".
gpu_compiler_requirement <- function() {
  jax <- grep("^jax==", python_requirements(), value = TRUE)
  sub("^jax==", "jax[cuda12]==", jax)
}

# A virtualenv name or path as a path: a name lives under reticulate's
# virtualenv root.
venv_path <- function(envname = NULL) {
  envname <- envname %||% Sys.getenv("KERASMESH_VENV", "r-keras")
  if (!nzchar(envname)) envname <- "r-keras"
  if (grepl("/", envname, fixed = TRUE) || startsWith(envname, "~")) {
    return(normalizePath(path.expand(envname), mustWork = FALSE))
  }
  file.path(virtualenv_root(), envname)
}

# TRUE for an existing virtualenv to update, FALSE for one to create; an
# error for a path that is neither.
check_venv_target <- function(path, call = rlang::caller_env()) {
  if (!file.exists(path)) {
    return(FALSE)
  }
  problem <- if (!dir.exists(path)) {
    "{.path {path}} is a file."
  } else if (!file.exists(file.path(path, "pyvenv.cfg"))) {
    if (length(dir(path, all.files = TRUE, no.. = TRUE)) == 0) {
      return(FALSE)
    }
    "{.path {path}} is a directory but not a virtualenv (no
     {.file pyvenv.cfg})."
  }
  if (is.null(problem)) {
    return(TRUE)
  }
  kerasmesh_abort(
    c("{.arg envname} must be a virtualenv or a path where one can be
       created.",
      x = problem,
      i = "Give another {.arg envname}, or move {.path {path}} away."),
    kind = kinds$install_envname, path = path, call = call
  )
}

# What a Python is, asked by running it: version, whether reticulate can
# embed it (a shared libpython that is installed), whether it can create
# virtualenvs. One line each.
python_probe <- paste(
  "import os, sys, sysconfig",
  "c = sysconfig.get_config_var",
  "lib = c('INSTSONAME') or c('LDLIBRARY') or ''",
  "libdir = c('LIBDIR') or ''",
  "dirs = [libdir, os.path.join(libdir, c('MULTIARCH') or ''),",
  "        c('LIBPL') or '']",
  "found = sys.platform == 'win32' or any(",
  "    os.path.exists(os.path.join(d, lib)) for d in dirs if d)",
  "try:",
  "    import ensurepip, venv",
  "    can_venv = True",
  "except ImportError:",
  "    can_venv = False",
  "print('.'.join(map(str, sys.version_info[:3])))",
  "print(bool(c('Py_ENABLE_SHARED') or c('PYTHONFRAMEWORK')))",
  "print(found); print(lib); print(can_venv)",
  sep = "\n"
)

python_facts <- function(python) {
  out <- suppressWarnings(tryCatch(
    system2(python, c("-c", shQuote(python_probe)), stdout = TRUE,
            stderr = TRUE),
    error = function(e) structure(conditionMessage(e), status = 127L)
  ))
  if (!is.null(attr(out, "status")) || length(out) != 5) {
    return(list(runs = FALSE, output = paste(out, collapse = "\n")))
  }
  list(runs = TRUE, version = out[[1]], shared = out[[2]] == "True",
       libpython_found = out[[3]] == "True", libpython = out[[4]],
       can_venv = out[[5]] == "True")
}

# Signals `kerasmesh_error_install_python` unless `python` runs, is 3.11 or
# later, has a shared libpython installed and can create virtualenvs.
check_python_for_venv <- function(python, call = rlang::caller_env()) {
  facts <- if (nzchar(python)) python_facts(python) else list(runs = FALSE)
  problem <- python_problem(facts, python)
  if (is.null(problem)) {
    return(invisible(facts))
  }
  # nolint start: object_usage_linter. cli reads these.
  version <- facts$version
  lib <- facts$libpython %||% ""
  # nolint end
  kerasmesh_abort(
    c("kerasmesh needs a Python 3.11 or later that R can embed.",
      x = problem$x,
      i = problem$i),
    kind = kinds$install_python, python = python, call = call
  )
}

# What is wrong with a Python, as list(x =, i =) cli text that
# check_python_for_venv() fills in; NULL if nothing is.
python_problem <- function(facts, python) {
  if (!nzchar(python)) {
    list(x = "No {.code python3} on the {.envvar PATH}.",
         i = "Install Python 3.11 or later, or give its path as
              {.arg python}.")
  } else if (!facts$runs) {
    list(x = "{.path {python}} does not run as Python.",
         i = "Give the path of a Python executable as {.arg python}.")
  } else if (numeric_version(facts$version) < "3.11") {
    list(x = "{.path {python}} is Python {version}.",
         i = "Keras 3.15 and JAX 0.10 need Python 3.11 or later: give one
              as {.arg python}.")
  } else if (!facts$shared || !facts$libpython_found) {
    list(x = "{.path {python}} (Python {version}) has no shared libpython
              {if (nzchar(lib)) paste0('(', lib, ')')} installed, so
              reticulate can't load it into R.",
         i = "Use a Python built with {.code --enable-shared}; on Debian
              or Ubuntu, {.code apt-get install libpython3-dev}.")
  } else if (!facts$can_venv) {
    list(x = "{.path {python}} (Python {version}) can't create
              virtualenvs.",
         i = "On Debian or Ubuntu, {.code apt-get install python3-venv}.")
  }
}

# Runs Python; an error of `kind` with its last lines if it fails.
run_python <- function(python, args, doing, kind, ...,
                       call = rlang::caller_env()) {
  out <- suppressWarnings(system2(python, shQuote(args), stdout = TRUE,
                                  stderr = TRUE))
  status <- attr(out, "status") %||% 0L
  if (status != 0L) {
    # nolint start: object_usage_linter. cli reads it.
    last <- paste(utils::tail(out, 3), collapse = " ")
    # nolint end
    kerasmesh_abort(
      c("Can't {doing}.", x = "{.path {python}} said: {last}"),
      kind = kind, ..., call = call
    )
  }
  invisible(out)
}

# Downloads every requirement first and installs only when all are there,
# from the downloaded files: no network failure can stop an install
# halfway. pip reads its index (and PIP_INDEX_URL, PIP_FIND_LINKS, proxies)
# from its own configuration.
download_packages <- function(venv_python, requirements,
                              call = rlang::caller_env()) {
  wheels <- tempfile("kerasmesh-packages-")
  on.exit(unlink(wheels, recursive = TRUE), add = TRUE)
  pip <- c("-m", "pip", "--disable-pip-version-check")
  out <- suppressWarnings(system2(
    venv_python, shQuote(c(pip, "download", "-d", wheels,
                           requirements)),
    stdout = TRUE, stderr = TRUE
  ))
  if (!is.null(attr(out, "status"))) {
    kerasmesh_abort(
      c("Can't download kerasmesh's Python packages.",
        x = pip_failure(out),
        i = "Check the network connection (and pip's index or proxy
             settings), then run {.code install_kerasmesh()} again. Nothing
             was installed."),
      kind = kinds$install_download, call = call
    )
  }
  run_python(venv_python, c(pip, "install", "-q", "--no-index",
                            "--find-links", wheels, requirements),
             "install kerasmesh's Python packages",
             kind = kinds$install_download,
             call = call)
}

# pip's reason, in one line: that it can't reach its index, when its
# output says so, else its last words.
pip_failure <- function(out) {
  out <- trimws(out[nzchar(trimws(out))])
  unreachable <- grep(paste(
    "NewConnectionError", "Failed to establish a new connection",
    "Temporary failure in name resolution", "Network is unreachable",
    "Connection refused", "timed out", sep = "|"
  ), out, value = TRUE)
  text <- if (length(unreachable)) {
    paste("pip can't reach its package index (no network?):",
          sub("'\\).*$", "", sub("^.*(Failed to establish|NewConnectionError)",
                                   "\\1", unreachable[[1]])))
  } else {
    paste("pip said:", paste(utils::tail(out, 2), collapse = " "))
  }
  cli_escape(text)
}
