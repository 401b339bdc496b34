# install_kerasmesh() and kerasmesh's declared Python requirements. The
# installs run pip for real, offline: from a folder of small fake wheels
# with the pinned names and versions, or against an index on a closed
# loopback port for "no network".

# A wheel with no code for each "name==version" (or "name>=version").
fake_wheels <- function(requirements, dir) {
  dir.create(dir, showWarnings = FALSE)
  script <- c(
    "import sys, zipfile, re",
    "out = sys.argv[1]",
    "for req in sys.argv[2:]:",
    "    name, version = re.split('==|>=', req)",
    "    dist = re.sub('[-.]+', '_', name)",
    "    info = f'{dist}-{version}.dist-info'",
    "    path = f'{out}/{dist}-{version}-py3-none-any.whl'",
    "    with zipfile.ZipFile(path, 'w') as z:",
    "        z.writestr(f'{info}/METADATA', 'Metadata-Version: 2.1\\n'",
    "                   f'Name: {name}\\nVersion: {version}\\n')",
    "        z.writestr(f'{info}/WHEEL', 'Wheel-Version: 1.0\\n'",
    "                   'Generator: test\\nRoot-Is-Purelib: true\\n'",
    "                   'Tag: py3-none-any\\n')",
    "        z.writestr(f'{info}/RECORD', '')"
  )
  file <- tempfile(fileext = ".py")
  writeLines(script, file)
  status <- system2(host_python(), c(file, shQuote(dir),
                                     shQuote(requirements)))
  expect_identical(status, 0L)
  dir
}

host_python <- function() {
  python <- unname(Sys.which("python3"))
  if (!nzchar(python)) skip("no python3 on the PATH")
  python
}

installed_versions <- function(venv) {
  out <- system2(file.path(venv, "bin", "python"),
                 c("-m", "pip", "list", "--format=freeze",
                   "--disable-pip-version-check"), stdout = TRUE)
  out[!grepl("^(pip|setuptools)==", out)]
}

# An executable that answers install_kerasmesh()'s probe of a Python with
# `lines` (version, shared, libpython found, libpython, can create venvs).
probe_answering <- function(lines, env = parent.frame()) {
  path <- withr::local_tempfile(.local_envir = env)
  writeLines(c("#!/bin/sh", paste0("printf '",
                                    paste0(lines, "\\n", collapse = ""),
                                    "'")), path)
  Sys.chmod(path, "755")
  path
}

# pip as the tests want it, whatever the machine's pip configuration
# (which may name local indexes): only the fake wheels, or an index on a
# closed loopback port, as without a network.
local_pip_offline <- function(wheels, env = parent.frame()) {
  withr::local_envvar(PIP_CONFIG_FILE = "/dev/null", PIP_NO_INDEX = "1",
                      PIP_FIND_LINKS = wheels, PIP_INDEX_URL = NA,
                      PIP_EXTRA_INDEX_URL = NA, PIP_CONSTRAINT = NA,
                      .local_envir = env)
}
local_pip_no_network <- function(env = parent.frame()) {
  withr::local_envvar(PIP_CONFIG_FILE = "/dev/null", PIP_NO_INDEX = NA,
                      PIP_FIND_LINKS = NA, PIP_EXTRA_INDEX_URL = NA,
                      PIP_CONSTRAINT = NA,
                      PIP_INDEX_URL = "http://127.0.0.1:9/simple",
                      PIP_RETRIES = "1", PIP_TIMEOUT = "2",
                      .local_envir = env)
}

test_that("the pinned list is the one the development setup installs", {
  pinned <- kerasmesh:::python_requirements()
  expect_true(all(c("keras==3.15.1", "jax==0.10.2",
                    "orbax-checkpoint==0.12.8") %in% pinned))
  expect_false(any(grepl("tensorflow", pinned)))
  expect_identical(kerasmesh:::python_requirements(pinned = FALSE),
                   sub("==", ">=", pinned, fixed = TRUE))
  # tests/python/test_source.py checks that tools/requirements.txt (not in
  # the built package) includes this list.
})

test_that("kerasmesh declares its requirements when reticulate loads", {
  skip_if_not_installed("callr")
  out <- callr::r(function() {
    library(kerasmesh)
    before <- "reticulate" %in% loadedNamespaces()
    loadNamespace("reticulate")
    declared <- if (kerasmesh:::has_py_require()) {
      getExportedValue("reticulate", "py_require")()$packages
    }
    list(before = before, declared = declared,
         python = reticulate::py_available(initialize = FALSE))
  })
  expect_false(out$before)
  expect_false(out$python)
  if (utils::packageVersion("reticulate") >= "1.41") {
    expect_true(all(kerasmesh:::python_requirements(pinned = FALSE) %in%
                      out$declared))
  } else {
    # reticulate 1.28 has no py_require(): nothing is declared.
    expect_null(out$declared)
  }
})

test_that("nothing is declared once Python has started", {
  skip_if_not_installed("callr")
  skip_if_no_keras()
  python <- reticulate::py_config()$python
  out <- callr::r(function(python) {
    Sys.setenv(RETICULATE_PYTHON = python)
    reticulate::py_config()
    loadNamespace("kerasmesh")
    kerasmesh:::declare_python_requirements()
  }, list(python))
  expect_false(out)
})

test_that("an envname that is a file is an error, and the file stays", {
  file <- withr::local_tempfile()
  writeLines("precious", file)
  expect_snapshot(install_kerasmesh(file), error = TRUE,
                  transform = function(x) gsub(file, "<file>", x, fixed = TRUE))
  err <- expect_error(install_kerasmesh(file),
                      class = "kerasmesh_error_install_envname")
  expect_identical(err$path, normalizePath(file))
  expect_identical(readLines(file), "precious")
})

test_that("a directory that is not a virtualenv is an error", {
  dir <- withr::local_tempdir()
  writeLines("x", file.path(dir, "data.csv"))
  expect_error(install_kerasmesh(dir),
               class = "kerasmesh_error_install_envname")
  expect_identical(dir(dir), "data.csv")
})

test_that("a Python that is too old is an error, and nothing is created", {
  old <- Sys.glob("/root/.pyenv/versions/3.10*/bin/python3")
  if (length(old) == 0) {
    # A stand-in that answers the probe as Python 3.10 would.
    old <- probe_answering(c("3.10.13", "True", "True", "libpython3.10.so",
                             "True"))
  }
  venv <- file.path(withr::local_tempdir(), "env")
  err <- expect_error(install_kerasmesh(venv, python = old[[1]]),
                      class = "kerasmesh_error_install_python")
  expect_match(conditionMessage(err), "is Python 3.10", fixed = TRUE)
  expect_false(file.exists(venv))
})

test_that("a Python without a shared libpython is an error", {
  static <- probe_answering(c("3.12.1", "False", "False", "libpython3.12.a",
                               "True"))
  venv <- file.path(withr::local_tempdir(), "env")
  err <- expect_error(install_kerasmesh(venv, python = static),
                      class = "kerasmesh_error_install_python")
  expect_match(conditionMessage(err), "no shared libpython", fixed = TRUE)
  expect_false(file.exists(venv))
  expect_error(install_kerasmesh(venv, python = "/bin/false"),
               "does not run as Python",
               class = "kerasmesh_error_install_python")
})

test_that("install_kerasmesh() creates, then updates, an environment", {
  python <- host_python()
  wheels <- fake_wheels(kerasmesh:::python_requirements(),
                        file.path(withr::local_tempdir(), "wheels"))
  local_pip_offline(wheels)
  venv <- file.path(withr::local_tempdir(), "r-keras")
  expect_message(out <- install_kerasmesh(venv, python = python),
                 "Installed kerasmesh's Python packages")
  expect_identical(out, venv)
  versions <- installed_versions(venv)
  expect_true(all(c("keras==3.15.1", "jax==0.10.2",
                    "orbax-checkpoint==0.12.8") %in% versions))
  # An update with one package more keeps the rest.
  fake_wheels("extra-thing==1.0", wheels)
  suppressMessages(install_kerasmesh(venv, extra_packages = "extra-thing"))
  expect_true(all(c("keras==3.15.1", "extra-thing==1.0") %in%
                    installed_versions(venv)))

  # Without a network, an update fails before it touches the environment.
  before <- installed_versions(venv)
  local_pip_no_network()
  err <- expect_error(install_kerasmesh(venv, extra_packages = "other"),
                      class = "kerasmesh_error_install_download")
  expect_match(conditionMessage(err), "Nothing was installed", fixed = TRUE)
  expect_match(conditionMessage(err), "can't reach its package index",
               fixed = TRUE)
  expect_identical(installed_versions(venv), before)
})

# Two wheels pip installs in turn, the second failing once the first is in:
# "km-first" writes the file "kmclash" that "km-second" (which requires it)
# needs as a directory.
clashing_wheels <- function(dir) {
  script <- c(
    "import sys, zipfile",
    "def wheel(name, files, requires=''):",
    "    dist = name.replace('-', '_')",
    "    info = f'{dist}-1.0.dist-info'",
    "    with zipfile.ZipFile(f'{sys.argv[1]}/{dist}-1.0-py3-none-any.whl',",
    "                         'w') as z:",
    "        for path, text in files.items():",
    "            z.writestr(path, text)",
    "        z.writestr(f'{info}/METADATA', 'Metadata-Version: 2.1\\n'",
    "                   f'Name: {name}\\nVersion: 1.0\\n{requires}')",
    "        z.writestr(f'{info}/WHEEL', 'Wheel-Version: 1.0\\n'",
    "                   'Generator: test\\nRoot-Is-Purelib: true\\n'",
    "                   'Tag: py3-none-any\\n')",
    "        z.writestr(f'{info}/RECORD', '')",
    "wheel('km-first', {'kmclash': 'a file'})",
    "wheel('km-second', {'kmclash/inside.py': 'x = 1'},",
    "      'Requires-Dist: km-first\\n')"
  )
  file <- tempfile(fileext = ".py")
  writeLines(script, file)
  expect_identical(system2(host_python(), c(file, shQuote(dir))), 0L)
}

test_that("an update that fails while installing puts the environment back", {
  python <- host_python()
  wheels <- fake_wheels(kerasmesh:::python_requirements(),
                        file.path(withr::local_tempdir(), "wheels"))
  clashing_wheels(wheels)
  local_pip_offline(wheels)
  parent <- withr::local_tempdir()
  venv <- file.path(parent, "r-keras")
  suppressMessages(install_kerasmesh(venv, python = python))
  before <- installed_versions(venv)
  files <- sort(list.files(venv, recursive = TRUE, all.files = TRUE))
  err <- expect_error(install_kerasmesh(venv, extra_packages = "km-second"),
                      class = "kerasmesh_error_install_download")
  expect_match(conditionMessage(err), "Not a directory", fixed = TRUE)
  # pip had installed km-first before km-second failed: rolled back.
  expect_identical(installed_versions(venv), before)
  expect_identical(sort(list.files(venv, recursive = TRUE, all.files = TRUE)),
                   files)
  expect_identical(dir(parent, all.files = TRUE, no.. = TRUE), "r-keras")
  # A new environment that fails the same way is not left behind.
  fresh <- file.path(parent, "fresh")
  expect_error(install_kerasmesh(fresh, python = python,
                                 extra_packages = "km-second"),
               class = "kerasmesh_error_install_download")
  expect_identical(dir(parent, all.files = TRUE, no.. = TRUE), "r-keras")
})

test_that("without a network, a new environment is not left behind", {
  python <- host_python()
  local_pip_no_network()
  venv <- file.path(withr::local_tempdir(), "r-keras")
  expect_error(install_kerasmesh(venv, python = python),
               class = "kerasmesh_error_install_download")
  expect_false(file.exists(venv))
})

test_that("envname: a name lives under reticulate's virtualenv root", {
  withr::local_envvar(KERASMESH_VENV = NA, WORKON_HOME = "/tmp/venvs",
                      RETICULATE_VIRTUALENV_ROOT = NA)
  expect_identical(kerasmesh:::venv_path(), "/tmp/venvs/r-keras")
  expect_identical(kerasmesh:::venv_path("mine"), "/tmp/venvs/mine")
  withr::local_envvar(KERASMESH_VENV = "/opt/env")
  expect_identical(kerasmesh:::venv_path(), "/opt/env")
})

test_that("no message kerasmesh gives names a make target", {
  make <- "`make [a-z]|make (setup|check|rcheck|demo|site|pytest)\\b"
  ns <- asNamespace("kerasmesh")
  strings <- character()
  walk <- function(x) {
    if (is.character(x)) {
      strings <<- c(strings, x)
    } else if (is.call(x) || is.pairlist(x)) {
      for (a in as.list(x)) if (!missing(a)) walk(a)
    }
  }
  for (name in ls(ns, all.names = TRUE)) {
    f <- get(name, envir = ns)
    if (is.function(f)) walk(body(f))
  }
  expect_gt(length(strings), 500)
  expect_identical(grep(make, strings, value = TRUE), character())
  py <- list.files(system.file("python", package = "kerasmesh"),
                   "[.]py$", recursive = TRUE, full.names = TRUE)
  lines <- unlist(lapply(py, readLines, warn = FALSE))
  expect_identical(grep(make, lines, value = TRUE), character())
})

test_that("a Python without Keras: the error points to install_kerasmesh()", {
  skip_if_not_installed("callr")
  # The system's Python (reticulate puts the tests' virtualenv first on
  # the PATH once it has started).
  python <- Filter(file.exists, c("/usr/bin/python3",
                                  unname(Sys.which("python3"))))[1]
  skip_if(is.na(python) ||
            system2(python, c("-c", shQuote("import keras")),
                    stdout = FALSE, stderr = FALSE) == 0,
          "no python3 without keras to try")
  out <- callr::r(function(python) {
    Sys.setenv(RETICULATE_PYTHON = python)
    err <- tryCatch(kerasmesh::list_devices(), error = identity)
    list(class = class(err)[1], message = conditionMessage(err))
  }, list(python))
  expect_identical(out$class, "kerasmesh_error_no_keras")
  expect_match(out$message, "install_kerasmesh()", fixed = TRUE)
  expect_match(out$message, "RETICULATE_PYTHON", fixed = TRUE)
  if (kerasmesh:::has_py_require()) {
    expect_match(out$message, "py_require()", fixed = TRUE)
  }
  expect_no_match(out$message, "make ")
})
