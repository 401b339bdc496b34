# Hard time limits, so that a regression fails instead of hanging CI.

# `expr` in this session, stopped after `seconds` of elapsed time. R checks
# the limit between R operations, so use it for R code and quick Python
# calls; a call that could hang inside Python (a regular expression, a loop
# in C) belongs in in_fresh_r().
within_seconds <- function(expr, seconds = 30) {
  setTimeLimit(elapsed = seconds, transient = TRUE)
  on.exit(setTimeLimit(elapsed = Inf), add = TRUE)
  expr
}

# `fn` run in a new R session with kerasmesh and 8 simulated devices,
# killed after `timeout` seconds (callr then signals an error). Returns the
# value of `fn`: give it plain values, not Python objects.
in_fresh_r <- function(fn, timeout = 30) {
  testthat::skip_if_not_installed("callr")
  callr::r(function(fn) {
    library(kerasmesh)
    simulate_devices(8)
    fn()
  }, args = list(fn = fn), timeout = timeout)
}

# The class of the condition `expr` signals, or NULL.
condition_classes <- function(expr) {
  tryCatch({
    expr
    NULL
  }, condition = function(e) class(e))
}

# A callr R session with kerasmesh and Keras loaded, 8 simulated devices,
# closed when `env` ends: for tests that interrupt a call in it.
keras_session <- function(env = parent.frame()) {
  testthat::skip_if_not_installed("callr")
  rs <- callr::r_session$new()
  withr::defer(rs$close(), envir = env)
  rs$run(function() {
    library(kerasmesh)
    simulate_devices(8)
    invisible(reticulate::import("keras"))
  })
  rs
}
