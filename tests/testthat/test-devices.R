test_that("simulate_devices() gives 8 CPU devices", {
  skip_if_no_keras()
  expect_identical(list_devices(), paste0("cpu:", 0:7))
  expect_identical(list_devices("cpu"), paste0("cpu:", 0:7))
})

test_that("simulate_devices() again with the same count does nothing", {
  skip_if_no_keras()
  expect_identical(simulate_devices(8), 8L)
})

test_that("simulate_devices() with a new count after JAX started is an error", {
  skip_if_no_keras()
  expect_error(simulate_devices(4), class = "kerasmesh_error_devices_started")
  expect_snapshot(simulate_devices(4), error = TRUE)
})

test_that("bad arguments give classed errors", {
  expect_error(simulate_devices(0), class = "kerasmesh_error_argument")
  expect_error(simulate_devices("8"), class = "kerasmesh_error_argument")
  expect_error(list_devices(3), class = "kerasmesh_error_argument")
  skip_if_no_keras()
  expect_error(list_devices("xpu"), class = "kerasmesh_error_device_type")
})

test_that("simulate_devices() before JAX starts sets XLA_FLAGS", {
  skip_if_not_installed("callr")
  skip_if_no_keras()
  out <- callr::r(function() {
    Sys.setenv(XLA_FLAGS = "--xla_force_host_platform_device_count=2")
    kerasmesh::simulate_devices(3)
    c(Sys.getenv("XLA_FLAGS"), length(kerasmesh::list_devices()))
  })
  expect_identical(out, c("--xla_force_host_platform_device_count=3", "3"))
})

test_that("list_devices() sends its device type, or none", {
  expect_identical(shim_request("list_devices")$args,
                   list(device_type = NULL))
  expect_identical(shim_request("list_devices", "cpu"),
                   list(name = "devices.list_devices",
                        args = list(device_type = "cpu")))
})
