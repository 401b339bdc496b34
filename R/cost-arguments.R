# The arguments of layout_cost(), compare_layouts() and search_layout(),
# checked in R before Python starts: the distribution, the loss, the input
# shapes, and the step's levers (remat, accumulation_steps).

cost_distribution_arg <- function(x, arg = rlang::caller_arg(x),
                                  call = rlang::caller_env()) {
  if (is.null(x)) {
    kerasmesh_abort(
      c("{.arg {arg}} must be a distribution.", x = "Received `NULL`.",
        i = "Create one with {.fn data_parallel} or {.fn model_parallel}."),
      kind = kinds$distribution, call = call
    )
  }
  as_keras_distribution(x, arg = arg, call = call)
}

cost_loss_arg <- function(loss, call = rlang::caller_env()) {
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

cost_input_shapes_arg <- function(x, call = rlang::caller_env()) {
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

# The step's levers of layout_cost() and compare_layouts(): `remat` (NULL
# for the model as it is) and `accumulation_steps`, which must divide
# `batch_size`.
cost_levers_args <- function(remat, accumulation_steps, batch_size, call) {
  list(
    remat = check_remat(remat, allow_null = TRUE, call = call),
    accumulation_steps = check_accumulation_steps(accumulation_steps,
                                                  batch_size, call = call)
  )
}

check_accumulation_steps <- function(accumulation_steps, batch_size,
                                     call = rlang::caller_env()) {
  steps <- check_whole(accumulation_steps, kind = kinds$accumulation_steps,
                       call = call)
  if (batch_size %% steps != 0) {
    divisors <- whole_divisors(batch_size) # nolint: object_usage_linter. cli.
    kerasmesh_abort(
      c("{.arg accumulation_steps} ({steps}) must divide {.arg batch_size}
         ({format_whole(batch_size)}).",
        x = "{format_whole(batch_size)} samples don't make {steps} equal
             micro-batches.",
        i = "Divisors of {format_whole(batch_size)}:
             {paste(utils::head(divisors, 12), collapse = ', ')}."),
      kind = kinds$accumulation_steps, call = call
    )
  }
  steps
}

# The divisors of a positive whole number, smallest first.
whole_divisors <- function(n) {
  d <- seq_len(floor(sqrt(n)))
  d <- d[n %% d == 0]
  sort(unique(c(d, n %/% d)))
}
