#' List the devices Keras can use
#'
#' Names devices as Keras does (`"cpu:0"`, `"gpu:3"`). After
#' [distributed_initialize()], the devices of every process are listed.
#'
#' @param device_type `NULL` for the default type (accelerators when there
#'   are any, otherwise CPUs), or one of `"cpu"`, `"gpu"`, `"tpu"`.
#' @param ... Must be empty.
#' @return A character vector of device names.
#' @export
#' @examplesIf keras_available()
#' simulate_devices(8)
#' list_devices()
list_devices <- function(device_type = NULL, ...) {
  check_dots_none()
  if (!is.null(device_type)) {
    check_string(device_type)
  }
  as.character(shim_call("devices.list_devices", device_type = device_type))
}

#' Simulate CPU devices
#'
#' Makes JAX create `n` CPU devices (and use only CPUs), so meshes can be
#' tried on one machine. JAX reads this once, when it starts: call
#' `simulate_devices()` before anything that starts JAX. Calling it again
#' with the same `n` does nothing; a different `n` after JAX started is an
#' error, because only a new R session can change it.
#'
#' Called before Python starts, `simulate_devices()` also makes the choices
#' kerasmesh makes when it starts Python (see [kerasmesh-package]), without
#' starting it: the JAX backend when `KERAS_BACKEND` is unset, and
#' kerasmesh's Python. Code that imports Keras itself afterwards
#' (`reticulate::import("keras")`) then starts it on JAX, whatever
#' `keras.json` says.
#'
#' @param n Number of CPU devices, a whole number from 1 to 4096 (more
#'   would only exhaust memory and threads on one machine).
#' @param ... Must be empty.
#' @return `n`, invisibly.
#' @export
#' @examplesIf keras_available()
#' simulate_devices(8)
#' length(list_devices())
simulate_devices <- function(n = 8, ...) {
  check_dots_none()
  n <- check_whole(n, max = max_simulated_devices)
  current <- if (python_started()) {
    shim_call("devices.local_cpu_device_count")
  }
  if (!is.null(current)) {
    if (current != n) {
      kerasmesh_abort(
        c("Can't simulate {n} device{?s}: JAX has already started.",
          x = "This R session has {current} CPU device{?s}.",
          i = "Restart R and call {.code simulate_devices({n})} before
               anything else that uses Keras or JAX."),
        kind = kinds$devices_started
      )
    }
    return(invisible(n))
  }
  prepare_python()
  flags <- gsub(
    "--xla_force_host_platform_device_count=[0-9]+", "",
    Sys.getenv("XLA_FLAGS")
  )
  flags <- trimws(paste(flags, paste0(
    "--xla_force_host_platform_device_count=", n
  )))
  set_process_env(XLA_FLAGS = flags, JAX_PLATFORMS = "cpu")
  invisible(n)
}

max_simulated_devices <- 4096

# Python keeps its own copy of the environment once it has started.
set_process_env <- function(...) {
  values <- c(...)
  do.call(Sys.setenv, as.list(values))
  if (python_started()) {
    shim_call("backend.set_environ", values = as.list(values))
  }
}
