# The backend rule (R/backend.R, ?kerasmesh): loading changes nothing;
# kerasmesh chooses JAX only when nobody chose a backend and it is the one
# to start Python or Keras; any other backend is kerasmesh_error_backend.

# A package that does at load what keras3's .onLoad does to the backend
# (keras3 is not installable here): KERAS_BACKEND=tensorflow when unset.
fake_keras3_lib <- function() {
  lib <- withr::local_tempdir(.local_envir = parent.frame())
  src <- file.path(withr::local_tempdir(.local_envir = parent.frame()),
                   "fakekeras3")
  dir.create(file.path(src, "R"), recursive = TRUE)
  writeLines(c("Package: fakekeras3", "Version: 0.0.1", "Title: Fake",
               "Description: Sets the backend as keras3 does.",
               "License: MIT", "Author: a", "Maintainer: a <a@b.c>"),
             file.path(src, "DESCRIPTION"))
  writeLines("", file.path(src, "NAMESPACE"))
  writeLines(c(".onLoad <- function(libname, pkgname) {",
               "  if (!nzchar(Sys.getenv('KERAS_BACKEND')))",
               "    Sys.setenv(KERAS_BACKEND = 'tensorflow')",
               "}"), file.path(src, "R", "zzz.R"))
  out <- system2(file.path(R.home("bin"), "R"),
                 c("CMD", "INSTALL", "-l", shQuote(lib), shQuote(src)),
                 stdout = TRUE, stderr = TRUE)
  expect_true(dir.exists(file.path(lib, "fakekeras3")), label = out)
  lib
}

test_that("loading kerasmesh changes no environment variable", {
  skip_if_not_installed("callr")
  changed <- callr::r(function() {
    Sys.unsetenv("KERAS_BACKEND")
    before <- Sys.getenv()
    loadNamespace("kerasmesh")
    after <- Sys.getenv()
    c(setdiff(names(after), names(before)),
      names(after)[after[names(after)] != before[names(after)]])
  })
  expect_identical(changed, character())
})

test_that("both load orders leave the backend keras3 chose, and both fail", {
  skip_if_not_installed("callr")
  lib <- fake_keras3_lib()
  in_order <- function(first, second, lib) {
    .libPaths(c(lib, .libPaths()))
    Sys.unsetenv("KERAS_BACKEND")
    library(first, character.only = TRUE)
    library(second, character.only = TRUE)
    # simulate_devices() keeps the choice keras3 made.
    kerasmesh::simulate_devices(8)
    err <- tryCatch(kerasmesh::device_mesh(c(data = 2, model = 4)),
                    error = identity)
    c(backend = Sys.getenv("KERAS_BACKEND"), class = class(err)[1],
      python = reticulate::py_available(initialize = FALSE))
  }
  a <- callr::r(in_order, list("fakekeras3", "kerasmesh", lib))
  b <- callr::r(in_order, list("kerasmesh", "fakekeras3", lib))
  expect_identical(a, b)
  expect_identical(a[["backend"]], "tensorflow")
  # The backend problem is found before Python starts, not as a device
  # count.
  expect_identical(a[["class"]], "kerasmesh_error_backend")
  expect_identical(a[["python"]], "FALSE")
})

test_that("kerasmesh chooses JAX when it starts Python and nobody chose", {
  skip_if_not_installed("callr")
  skip_if_no_keras()
  out <- callr::r(function() {
    Sys.unsetenv("KERAS_BACKEND")
    library(kerasmesh)
    keras_available()
    os <- reticulate::import("os")
    keras <- reticulate::import("keras")
    c(Sys.getenv("KERAS_BACKEND"), os$environ[["KERAS_BACKEND"]],
      keras$backend$backend())
  })
  expect_identical(out, c("jax", "jax", "jax"))
})

test_that("simulate_devices() chooses JAX before code imports Keras itself", {
  skip_if_not_installed("callr")
  skip_if_no_keras()
  # A newcomer's machine: nothing exported, and the keras.json Keras wrote
  # on an earlier import without KERAS_BACKEND says "tensorflow".
  home <- withr::local_tempdir()
  writeLines('{"backend": "tensorflow"}', file.path(home, "keras.json"))
  out <- callr::r(function() {
    Sys.unsetenv(c("KERAS_BACKEND", "XLA_FLAGS", "JAX_PLATFORMS"))
    library(kerasmesh)
    simulate_devices(8)
    started <- reticulate::py_available(initialize = FALSE)
    keras <- reticulate::import("keras")
    list(started = started, env = Sys.getenv("KERAS_BACKEND"),
         backend = keras$backend$backend(),
         devices = length(keras$distribution$list_devices()))
  }, env = c(callr::rcmd_safe_env(), KERAS_HOME = home))
  expect_identical(out, list(started = FALSE, env = "jax", backend = "jax",
                             devices = 8L))
  # Keras's own config is left as it was.
  expect_match(readLines(file.path(home, "keras.json")), "tensorflow")
})

test_that("a backend chosen after Python started reaches Keras", {
  skip_if_not_installed("callr")
  skip_if_no_keras()
  out <- callr::r(function() {
    Sys.unsetenv("KERAS_BACKEND")
    library(kerasmesh)
    # kerasmesh starts Python (choosing JAX), but not Keras; then the
    # backend is chosen in R, as keras3::use_backend() would.
    kerasmesh:::configure_python()
    reticulate::py_eval("1")
    Sys.setenv(KERAS_BACKEND = "numpy")
    err <- tryCatch(device_mesh(c(a = 1)), error = identity)
    os <- reticulate::import("os")
    c(class(err)[1], err$backend, os$environ[["KERAS_BACKEND"]])
  })
  expect_identical(out, c("kerasmesh_error_backend", "numpy", "numpy"))
})

test_that("Keras started on another backend: the error says restart R", {
  skip_if_not_installed("callr")
  skip_if_no_keras()
  out <- callr::r(function() {
    Sys.setenv(KERAS_BACKEND = "numpy")
    library(kerasmesh)
    keras_available()
    reticulate::import("keras")
    err <- tryCatch(layout_map(device_mesh(c(a = 1))), error = identity)
    list(class = class(err), backend = err$backend,
         started = err$keras_started, message = conditionMessage(err),
         devices = simulate_devices(1))
  })
  expect_identical(out$class[1:2],
                   c("kerasmesh_error_backend", "kerasmesh_error"))
  expect_identical(out$backend, "numpy")
  expect_true(out$started)
  expect_match(out$message, "restart R", fixed = TRUE)
  expect_match(out$message, 'keras3::use_backend("jax")', fixed = TRUE)
  expect_no_match(out$message, "device")
  # simulate_devices() works on any backend.
  expect_equal(out$devices, 1)
})

test_that("the backend error names the backend and the way out", {
  expect_snapshot(error = TRUE, {
    kerasmesh:::abort_backend(list(started = FALSE, backend = "tensorflow"),
                              call = quote(device_mesh()))
    kerasmesh:::abort_backend(list(started = TRUE, backend = "tensorflow"),
                              call = quote(device_mesh()))
  })
})

test_that("only the backend-free shim calls skip the check", {
  free <- kerasmesh:::backend_free_module
  expect_true(free("backend.backend_state"))
  expect_true(free("session.kinds"))
  expect_true(free("devices.local_cpu_device_count"))
  expect_false(free("devices.list_devices"))
  expect_false(free("mesh.new_mesh"))
  expect_false(free("arrays.as_array"))
})
