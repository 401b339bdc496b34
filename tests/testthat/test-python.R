test_that("library(kerasmesh) does not start Python", {
  skip_if_not_installed("callr")
  started <- callr::r(function() {
    library(kerasmesh)
    reticulate::py_available(initialize = FALSE)
  })
  expect_false(started)
})

test_that("library(kerasmesh) loads no reticulate; r_to_py() works later", {
  skip_if_not_installed("callr")
  skip_if_no_keras()
  out <- callr::r(function() {
    library(kerasmesh)
    before <- "reticulate" %in% loadedNamespaces()
    simulate_devices(8)
    mesh <- device_mesh(c(data = 2, model = 4))
    c(before, class(reticulate::r_to_py(mesh))[1])
  })
  expect_identical(out, c(
    "FALSE", "keras.src.distribution.distribution_lib.DeviceMesh"
  ))
})

test_that("Python errors become R conditions with the Python type", {
  skip_if_no_keras()
  err <- expect_error(
    kerasmesh:::shim_call("describe.object_type"),
    class = "kerasmesh_error_python"
  )
  expect_identical(err$python_type, "TypeError")
  err <- expect_error(
    kerasmesh:::with_python_errors(reticulate::py_eval("1/0")),
    class = "kerasmesh_error_python"
  )
  expect_identical(err$python_type, "ZeroDivisionError")
  expect_match(err$python_message, "division by zero")
  expect_snapshot(
    kerasmesh:::with_python_errors(reticulate::py_eval("1/0")),
    error = TRUE
  )
  # The session stays usable.
  expect_identical(reticulate::py_eval("1 + 1"), 2L)
})

test_that("another Keras backend gives a classed error", {
  skip_if_not_installed("callr")
  skip_if_no_keras()
  classes <- callr::r(function() {
    Sys.setenv(KERAS_BACKEND = "numpy")
    err <- tryCatch(kerasmesh::data_parallel(), error = identity)
    mesh <- tryCatch(kerasmesh::device_mesh(c(a = 1)), error = identity)
    c(class(err)[1], conditionMessage(err), class(mesh)[1])
  })
  expect_identical(classes[1], "kerasmesh_error_backend")
  expect_match(classes[2], "numpy")
  expect_identical(classes[3], "kerasmesh_error_backend")
})

test_that("keras_available() finds the virtualenv", {
  skip_if_no_keras()
  expect_true(keras_available())
})

test_that("the converting route refuses NumPy values, whatever reticulate", {
  skip_if_no_keras()
  err <- expect_error(
    kerasmesh:::shim_call("arrays.as_array", values = list(1, 2),
                          shape = list(2L)),
    class = "kerasmesh_error_python"
  )
  expect_identical(err$python_type, "TypeError")
  expect_match(err$python_message, "numpy ndarray", fixed = TRUE)
})

test_that("Python objects come back through the non-converting handle", {
  skip_if_no_keras()
  # A converting handle converts what it returns, differently by version.
  converting <- reticulate::import_from_path(
    "kerasmesh.arrays.values",
    path = system.file("python", package = "kerasmesh"), convert = TRUE
  )
  a <- converting$as_array(list(1, 2, 3), list(3L))
  if (inherits(a, "python.builtin.object")) {
    # reticulate < 1.38 can't convert a NumPy 2 array, but converts what
    # it returns.
    expect_identical(a$shape, list(3L))
  } else {
    # reticulate >= 1.38 converts the array itself to an R array.
    expect_identical(as.vector(a), c(1, 2, 3))
  }
  # numpy_array() does not use it: its array and everything read from it stay
  # Python, so no reticulate version converts them.
  x <- numpy_array(c(1, 2, 3))
  expect_true("numpy.ndarray" %in% class(x))
  expect_s3_class(x$shape, "python.builtin.tuple")
  expect_true("numpy.ndarray" %in% class(x$copy()))
})

test_that("plain results come back as the same R types", {
  skip_if_no_keras()
  desc <- kerasmesh:::shim_call("mesh.describe_mesh",
                                mesh = reticulate::r_to_py(book_mesh()))
  expect_identical(desc$shape, c(2L, 4L))
  expect_identical(desc$axis_names, c("data", "model"))
  expect_s3_class(desc$mesh,
                  "keras.src.distribution.distribution_lib.DeviceMesh")
})

test_that("the shim's warnings arrive as classed R warnings", {
  skip_if_no_keras()
  local_shim_export("arrays.check_representable", "arrays.values")
  expect_warning(
    out <- kerasmesh:::shim_call("arrays.check_representable",
                                 values = list(16777217), dtype = "float32"),
    class = "kerasmesh_warning_array_precision"
  )
  expect_null(out)
  expect_no_warning(
    kerasmesh:::shim_call("arrays.check_representable", values = list(1),
                          dtype = "float32")
  )
})

test_that("object_type() names R values without starting Python", {
  expect_identical(kerasmesh:::object_type(1), "r")
  expect_identical(kerasmesh:::object_type(list(py = 1)), "r")
})

test_that("object_type() asks the shim what a Keras object is", {
  skip_if_no_keras()
  mesh <- book_mesh()
  expect_identical(kerasmesh:::object_type(reticulate::r_to_py(mesh)),
                   "device_mesh")
  expect_identical(kerasmesh:::object_type(reticulate::r_to_py(list(1))),
                   "other")
})

test_that("RETICULATE_PYTHON comes before KERASMESH_VENV", {
  skip_if_not_installed("callr")
  skip_if_no_keras()
  python <- reticulate::py_config()$python
  found <- callr::r(function(python) {
    Sys.setenv(RETICULATE_PYTHON = python,
               KERASMESH_VENV = file.path(tempdir(), "no-such-venv"))
    kerasmesh::keras_available()
    reticulate::py_config()$python
  }, list(python))
  expect_identical(normalizePath(found), normalizePath(python))
})

test_that("a KERASMESH_VENV that does not exist is an error naming it", {
  skip_if_not_installed("callr")
  err <- callr::r(function() {
    Sys.unsetenv("RETICULATE_PYTHON")
    Sys.setenv(KERASMESH_VENV = file.path(tempdir(), "no-such-venv"))
    tryCatch(kerasmesh:::configure_python(), error = function(e) {
      list(class = class(e), message = conditionMessage(e),
           python = reticulate::py_available(initialize = FALSE))
    })
  })
  expect_identical(err$class[1], "kerasmesh_error_no_keras")
  expect_match(err$message, "no-such-venv", fixed = TRUE)
  expect_match(err$message, "install_kerasmesh(", fixed = TRUE)
  expect_false(err$python)
})

test_that("without KERASMESH_VENV, the r-keras virtualenv is used if there", {
  root <- withr::local_tempdir()
  withr::local_envvar(KERASMESH_VENV = NA, WORKON_HOME = root,
                      RETICULATE_VIRTUALENV_ROOT = NA)
  # None: reticulate's own choice (its managed Python from 1.41).
  expect_null(kerasmesh:::kerasmesh_venv())
  dir.create(file.path(root, "r-keras"))
  expect_identical(kerasmesh:::kerasmesh_venv(), file.path(root, "r-keras"))
  withr::local_envvar(KERASMESH_VENV = root)
  expect_identical(kerasmesh:::kerasmesh_venv(), root)
})

test_that("attaching kerasmesh after keras3 or reticulate masks nothing", {
  keras3 <- readLines(test_path("fixtures", "keras3-exports.txt"))
  keras3 <- keras3[!startsWith(keras3, "#")]
  expect_gt(length(keras3), 700)
  expect_true("np_array" %in% keras3)
  ours <- getNamespaceExports("kerasmesh")
  # A name shared with reticulate would have to be the same function.
  reticulate <- getNamespaceExports("reticulate")
  same <- vapply(intersect(ours, reticulate), function(name) {
    identical(getExportedValue("kerasmesh", name),
              getExportedValue("reticulate", name))
  }, logical(1))
  expect_identical(names(same)[!same], character())
  # keras3 can't be installed here: no name may be shared at all.
  expect_identical(intersect(ours, keras3), character())
})

# The shim's api functions and their parameters, asked from Python.
shim_parameters <- function(fn) {
  found <- tryCatch(kerasmesh:::shim()$`_function`(fn),
                    error = function(e) NULL)
  if (is.null(found)) {
    return(NULL)
  }
  params <- reticulate::py_eval(paste(
    "lambda fn: ['**' if p.kind == p.VAR_KEYWORD else n for n, p in",
    "__import__('inspect').signature(fn).parameters.items()]"
  ))
  as.character(unlist(params(found)))
}

api_exports <- function() {
  exports <- reticulate::py_eval(paste(
    "lambda api: [f'{m.name}.{f}' for m in",
    "__import__('pkgutil').iter_modules(api.__path__) for f in",
    "__import__('importlib').import_module(f'{api.__name__}.{m.name}')",
    ".__all__]"
  ))
  kerasmesh:::shim()
  as.character(unlist(exports(reticulate::import("kerasmesh.api"))))
}

test_that("every shim call names arguments its shim function has", {
  skip_if_no_keras()
  exprs <- unlist(lapply(source_files(), parse, keep.source = FALSE))
  calls <- shim_calls(exprs)
  expect_gt(length(calls), 30)
  expect_identical(shim_call_problems(calls, shim_parameters), character())
})

test_that("api/ exports only what R calls", {
  skip_if_no_keras()
  exprs <- unlist(lapply(source_files(), parse, keep.source = FALSE))
  called <- unique(unlist(lapply(shim_calls(exprs), `[[`, "fn")))
  expect_identical(setdiff(api_exports(), called), character())
})

test_that("a shim call with a wrong or unnamed argument is reported", {
  calls <- shim_calls(expression(
    f <- function(m) {
      shim_call("plan.plan_layout", modle = m, call = call)
      shim_object("arrays.as_array", values = 1, 3)
      the$shim$call("plan.nothing")
      shim_call(name)
      shim_call("plan.plan_layout", model = m, distribution = NULL)
    }
  ))
  parameters <- function(fn) {
    switch(fn, plan.plan_layout = c("model", "distribution"),
           arrays.as_array = c("values", "shape"))
  }
  expect_identical(shim_call_problems(calls, parameters), c(
    "plan.plan_layout: no parameter modle",
    "arrays.as_array: an unnamed argument",
    "plan.nothing: no such api function",
    "a shim call names its function by a variable"
  ))
})

test_that("shim_call() refuses an argument without a name", {
  expect_error(kerasmesh:::shim_call("mesh.device_mesh", c(2, 4)),
               class = "rlang_error", regexp = "must name every argument")
  expect_error(kerasmesh:::shim_object("arrays.as_array", values = 1, 2),
               regexp = "must name every argument")
})

test_that("a test's shim export is gone after it, and api/ is as it was", {
  skip_if_no_keras()
  api <- reticulate::import("kerasmesh.api.session", convert = FALSE)
  before <- reticulate::py_to_r(reticulate::py_get_attr(api, "__all__"))
  local({
    local_shim_export("session.kinds", "core.errors")
    expect_true(is.list(kerasmesh:::shim_call("session.kinds")))
  })
  after <- reticulate::py_get_attr(api, "__all__")
  expect_true(inherits(after, "python.builtin.list"))
  expect_identical(reticulate::py_to_r(after), before)
  expect_error(kerasmesh:::shim_call("session.kinds"),
               class = "kerasmesh_error_python")
})

test_that("a Python thread's write to a closed pipe is a Python error", {
  # reticulate 1.41 starts Python with R's SIGPIPE handler in place, which
  # crashed R when a thread that is not R's wrote to a closed pipe.
  skip_if_no_keras()
  skip_on_os("windows")
  out <- in_fresh_r(function() {
    kerasmesh:::configure_python()
    pipes <- reticulate::import_from_path(
      "kerasmesh.core.broken_pipes", convert = FALSE,
      path = system.file("python", package = "kerasmesh"))
    handler <- function() reticulate::py_str(pipes$os_handler())
    before <- handler()
    kerasmesh:::shim()
    during <- handler()
    reticulate::py_run_string(paste(
      "import os, threading",
      "def _write():",
      "    r, w = os.pipe()",
      "    os.close(r)",
      "    try:",
      "        os.write(w, b'x')",
      "    except BrokenPipeError as e:",
      "        _seen.append(type(e).__name__)",
      "_seen = []",
      "_t = threading.Thread(target=_write)",
      "_t.start()",
      "_t.join()",
      sep = "\n"))
    seen <- reticulate::py_eval("_seen")
    unloadNamespace("kerasmesh")
    list(before = before, during = during, seen = seen, after = handler())
  }, timeout = 120)
  expect_identical(out$during, "1")
  expect_identical(out$seen, "BrokenPipeError")
  # Unloading kerasmesh puts back the handler that was there.
  expect_identical(out$after, out$before)
})

test_that("an object read back from a file is refused by name", {
  skip_if_no_keras()
  mesh <- book_mesh()
  lm <- layout_map(mesh, "dense.*kernel" = c(NA, "model"))
  dist <- data_parallel(device_mesh(c(data = 8)))
  back <- function(x) {
    file <- withr::local_tempfile(fileext = ".rds")
    saveRDS(x, file)
    readRDS(file)
  }
  old_mesh <- back(mesh)
  old_lm <- back(lm)
  expect_output(print(old_mesh), "2 x 4")
  expect_snapshot(data_parallel(old_mesh), error = TRUE)
  for (use in list(function() old_lm[["dense/kernel"]],
                   function() model_parallel(old_lm),
                   function() reticulate::r_to_py(old_lm),
                   function() set_distribution(back(dist)),
                   function() layout_map(old_mesh))) {
    expect_error(use(), "must be made in this R session",
                 class = "kerasmesh_error_argument")
  }
  # What was made in this session still works.
  expect_s3_class(model_parallel(lm), "kerasmesh_model_parallel")
})
