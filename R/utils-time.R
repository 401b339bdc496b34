# Time, for deadlines: R's `timeout` arguments count wall time from the
# call, through building, tracing, compiling and waiting.

# Seconds since some fixed point, for deadlines.
elapsed_seconds <- function() {
  proc.time()[["elapsed"]]
}

# `timeout`, the seconds a whole call may take, from the call: a positive
# number, at most `max_timeout`. A billion seconds (31 years) is longer
# than any call needs, and past about nine billion Python's waits fail
# ("timestamp out of range for platform time_t") in a thread where no
# error reaches R.
max_timeout <- 1e9

check_timeout <- function(x, arg = rlang::caller_arg(x),
                          call = rlang::caller_env()) {
  force(arg)
  x <- check_number(x, "a positive number of seconds", min = 0,
                    exclusive_min = TRUE, arg = arg, call = call)
  if (x > max_timeout) {
    kerasmesh_abort(
      c("{.arg {arg}} must be at most {format_whole(max_timeout)} seconds
         (31 years).", x = "Received {format(x)}."),
      kind = kinds$argument, call = call
    )
  }
  x
}
