# The step's levers besides the layout, as layout_cost() and
# compare_layouts() take them: `remat` (checked by check_remat(), remat.R)
# and `accumulation_steps`, checked in R before Python starts.

# The step's levers of layout_cost() and compare_layouts(): `remat` (NULL
# for the model as it is) and `accumulation_steps` (NULL for the optimizer
# as it is), which must divide `batch_size`.
check_cost_levers <- function(remat, accumulation_steps, batch_size, call) {
  list(
    remat = check_remat(remat, allow_null = TRUE, call = call),
    accumulation_steps = check_accumulation_steps(accumulation_steps,
                                                  batch_size, call = call)
  )
}

check_accumulation_steps <- function(accumulation_steps, batch_size,
                                     call = rlang::caller_env()) {
  if (is.null(accumulation_steps)) {
    return(NULL)
  }
  steps <- check_whole(accumulation_steps, kind = kinds$accumulation_steps,
                       call = call)
  if (batch_size %% steps != 0) {
    divisors <- whole_divisors(batch_size) # nolint: object_usage_linter. cli.
    kerasmesh_abort(
      c("{.arg accumulation_steps} ({steps}) must divide {.arg batch_size}
         ({format_whole(batch_size)}).",
        x = "A batch of {format_whole(batch_size)}
             {cli::qty(batch_size)}sample{?s} can't make {steps} equal
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
