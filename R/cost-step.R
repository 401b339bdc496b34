# The training step a cost compiles, as layout_cost(), compare_layouts()
# and search_layout() take it: optimizer, loss, input shapes and timeout,
# checked in R before Python starts.

# The step's arguments, checked; then Python starts (on the first call),
# inside the caller's time.
check_step_settings <- function(optimizer, loss, input_shapes, timeout, call) {
  step <- list(
    optimizer = check_optimizer(optimizer, call = call),
    loss = check_loss(loss, call = call),
    input_shapes = check_input_shapes(input_shapes, call = call),
    timeout = check_timeout(timeout, call = call)
  )
  wait_for_compiles_at_exit()
  shim(call)
  step
}

# A compile left running by a timeout must end before the process exits:
# exiting while XLA compiles aborts in its C++ code.
wait_for_compiles_at_exit <- function() {
  if (is.null(the$compile_waiter)) {
    the$compile_waiter <- new.env()
    reg.finalizer(the$compile_waiter, function(e) {
      if (python_started()) {
        try(shim_call("cost.wait_for_compiles"), silent = TRUE)
      }
    }, onexit = TRUE)
  }
  invisible()
}

check_loss <- function(loss, call = rlang::caller_env()) {
  ok_one <- function(l) {
    inherits(l, "python.builtin.object") ||
      (is.character(l) && length(l) == 1 && !is.na(l) && nzchar(l))
  }
  if (is.null(loss) || ok_one(loss)) {
    return(loss)
  }
  if (is.character(loss) && !anyNA(loss)) {
    loss <- as.list(loss)
  }
  if (is.list(loss) && length(loss) && all(vapply(loss, ok_one, TRUE))) {
    return(if (is.null(names(loss))) unname(loss) else loss)
  }
  stop_input_type(
    loss, "a loss name, a Keras loss, or a list of them", show_value = FALSE,
    way_out = 'For example {.code "mse"}; R functions can\'t be traced by JAX.',
    kind = kinds$loss, call = call
  )
}

check_input_shapes <- function(x, call = rlang::caller_env()) {
  if (is.null(x)) {
    return(NULL)
  }
  names <- names(x)
  ok <- is.list(x) && length(x) > 0 && !is.null(names) && !anyNA(names) &&
    all(nzchar(names)) && all(vapply(x, function(s) {
      is.numeric(s) && length(s) > 0 && !anyNA(s) && all(s >= 1) &&
        all(s <= .Machine$integer.max) && all(s == round(s))
    }, TRUE))
  if (!ok) {
    stop_input_type(
      x, "a named list of input shapes", show_value = FALSE,
      way_out = "Give each shape without the batch dimension, such as
             {.code list(token_ids = 128, padding_mask = 128)}.",
      kind = kinds$input_shapes, arg = "input_shapes", call = call
    )
  }
  lapply(x, function(s) as.list(as.integer(s)))
}
