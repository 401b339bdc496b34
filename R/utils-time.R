# Time, for deadlines: R's `timeout` arguments count wall time from the
# call, through building, tracing, compiling and waiting.

# Seconds since some fixed point, for deadlines.
elapsed_seconds <- function() {
  proc.time()[["elapsed"]]
}
