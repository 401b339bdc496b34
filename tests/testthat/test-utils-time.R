test_that("elapsed_seconds() is one number that never goes backwards", {
  first <- elapsed_seconds()
  expect_true(is.double(first) && length(first) == 1 && first >= 0)
  expect_gte(elapsed_seconds(), first)
})

test_that("timeout is a positive number of seconds within Python's waits", {
  wait <- function(timeout) check_timeout(timeout)
  expect_identical(wait(3600), 3600)
  expect_identical(wait(1e9), 1e9)
  expect_snapshot(error = TRUE, {
    wait(Inf)
    wait(1e12)
    wait(0)
    wait("1h")
  })
  # Every function with `timeout` refuses it before Python starts.
  topo <- device_topology("h100-sxm-80gb")
  build <- function() NULL
  for (call in list(
    quote(search_layout(build, topo, 16, timeout = 1e12)),
    quote(launch_local(build, timeout = Inf)),
    quote(checkpoint_wait(timeout = 1e300)),
    quote(callback_checkpoint("dir", timeout = Inf))
  )) {
    expect_error(eval(call), class = "kerasmesh_error_argument",
                 info = deparse1(call))
  }
})
