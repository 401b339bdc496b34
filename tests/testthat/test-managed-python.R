# The path of a CRAN user with reticulate's managed Python (reticulate >=
# 1.41): no RETICULATE_PYTHON, no virtualenv; reticulate resolves the
# packages kerasmesh declares with py_require() through uv when Python
# starts. Run offline from a folder of wheels: KERASMESH_TEST_UV names the
# uv executable and KERASMESH_TEST_WHEELS the folder. The Debian 13 stack
# (tools/debian13.sh) sets both and KERASMESH_REQUIRE_MANAGED_PYTHON=true,
# under which this test must run.

skip_if_no_managed_python <- function() {
  required <- identical(Sys.getenv("KERASMESH_REQUIRE_MANAGED_PYTHON"),
                        "true")
  why <- if (utils::packageVersion("reticulate") < "1.41") {
    paste0("reticulate ", utils::packageVersion("reticulate"),
           " has no py_require(), so no managed Python")
  } else if (!file.exists(Sys.getenv("KERASMESH_TEST_UV", "")) ||
             !dir.exists(Sys.getenv("KERASMESH_TEST_WHEELS", ""))) {
    "KERASMESH_TEST_UV and KERASMESH_TEST_WHEELS don't name uv and wheels"
  } else if (!requireNamespace("callr", quietly = TRUE)) {
    "callr is not installed"
  }
  if (is.null(why)) {
    return(invisible(TRUE))
  }
  if (required && utils::packageVersion("reticulate") >= "1.41") {
    stop("The managed-Python test is required but can't run: ", why, ".")
  }
  skip(why)
}

# A new R session as a CRAN user has it: no Python chosen, no virtualenv
# (an empty virtualenv root), uv offline from the wheels, only the
# system's Python.
#
# reticulate 1.41 runs `uv run --python-preference only-managed --python
# <exact version from uv's download list>`, so offline it finds no Python
# (later versions let uv use the system's). For it, the system's Python is
# presented as a uv-managed installation (a folder named as uv names them,
# in UV_PYTHON_INSTALL_DIR) and its exact version is required with
# py_require(); the packages still come from kerasmesh's declarations.
managed_python <- function(fn, backend = NA) {
  root <- withr::local_tempdir()
  callr::r(function(fn, root, backend, uv, wheels) {
    Sys.unsetenv(c("RETICULATE_PYTHON", "RETICULATE_PYTHON_ENV",
                   "KERASMESH_VENV", "VIRTUAL_ENV", "KERAS_BACKEND"))
    if (!is.na(backend)) Sys.setenv(KERAS_BACKEND = backend)
    Sys.setenv(WORKON_HOME = root, RETICULATE_VIRTUALENV_ROOT = root,
               RETICULATE_UV = uv, UV_OFFLINE = "1", UV_NO_INDEX = "1",
               UV_FIND_LINKS = wheels, UV_PYTHON_PREFERENCE = "only-system")
    if (utils::packageVersion("reticulate") < "1.42") {
      python <- Sys.which("python3")
      facts <- system2(python, c("-c", shQuote(paste(
        "import sys, platform;",
        "print(platform.python_version()); print(sys.executable)"
      ))), stdout = TRUE)
      managed <- file.path(root, "uv-python",
                           paste0("cpython-", facts[1], "-linux-x86_64-gnu"))
      dir.create(file.path(managed, "bin"), recursive = TRUE)
      minor <- sub("[.][0-9]+$", "", facts[1])
      for (name in c("python", "python3", paste0("python", minor))) {
        file.symlink(normalizePath(facts[2]), file.path(managed, "bin", name))
      }
      Sys.setenv(UV_PYTHON_INSTALL_DIR = dirname(managed))
      getExportedValue("reticulate", "py_require")(python_version = facts[1])
    }
    fn()
  }, list(fn, root, backend, Sys.getenv("KERASMESH_TEST_UV"),
          Sys.getenv("KERASMESH_TEST_WHEELS")))
}

test_that("managed Python: a mesh, a model-parallel fit and a checkpoint", {
  skip_if_no_managed_python()
  out <- managed_python(function() {
    library(kerasmesh)
    simulate_devices(8)
    mesh <- device_mesh(c(data = 2, model = 4))
    config <- reticulate::py_config()
    keras <- reticulate::import("keras")
    lm <- layout_map(mesh, ".*dense.*kernel" = c(NA, "model"),
                     ".*dense.*bias" = "model")
    dist <- model_parallel(lm, batch_dim_name = "data")
    build <- function() {
      with_distribution(dist, {
        # Fixed names: the restored model's variables have the same paths.
        m <- keras$Sequential(list(keras$Input(shape = list(8L)),
                                   keras$layers$Dense(16L, name = "dense")),
                              name = "sequential")
        m$compile(optimizer = keras$optimizers$Adam(name = "adam"),
                  loss = "mse")
        m
      })
    }
    model <- build()
    x <- numpy_array(matrix(seq_len(64 * 8) / 512, 64))
    y <- numpy_array(matrix(0, 64, 16))
    with_distribution(dist, model$fit(x, y, epochs = 2L, batch_size = 16L,
                                      verbose = 0L))
    sharding <- variable_sharding(model)
    dir <- file.path(tempdir(), "ckpt")
    save_checkpoint(model, dir, step = 2)
    fresh <- build()
    restore_checkpoint(fresh, dir)
    kernel <- "^sequential[_0-9]*/dense/kernel$"
    list(python = config$python, ephemeral = isTRUE(config$ephemeral),
         declared = reticulate::py_require()$packages,
         backend = keras$backend$backend(),
         mesh = mesh_shape(mesh),
         kernel_copies = sharding$copies[grepl(kernel, sharding$path)],
         trained = unname(variable_values(model)[grepl(kernel, names(
           variable_values(model)))]),
         restored = unname(variable_values(fresh)[grepl(kernel, names(
           variable_values(fresh)))]),
         steps = checkpoint_info(dir)$steps$step)
  })
  # reticulate's own environment, not a virtualenv of ours.
  expect_true(out$ephemeral)
  expect_false(grepl("virtualenvs", out$python, fixed = TRUE))
  expect_true(all(kerasmesh:::python_requirements(pinned = FALSE) %in%
                    out$declared))
  expect_identical(out$backend, "jax")
  expect_identical(out$mesh, c(data = 2L, model = 4L))
  expect_identical(out$kernel_copies, 2L)
  expect_identical(out$restored, out$trained)
  expect_equal(out$steps, 2)
})

test_that("managed Python on the TensorFlow backend: kerasmesh_error_backend", {
  skip_if_no_managed_python()
  out <- managed_python(function() {
    library(kerasmesh)
    err <- tryCatch(device_mesh(c(data = 2, model = 4)), error = identity)
    list(class = class(err), message = conditionMessage(err),
         python = reticulate::py_available(initialize = FALSE))
  }, backend = "tensorflow")
  expect_identical(out$class[1], "kerasmesh_error_backend")
  expect_match(out$message, 'keras3::use_backend("jax")', fixed = TRUE)
  expect_no_match(out$message, "device")
  expect_false(out$python)
})
