# Argument checks that know the caller's argument name.

# A classed error for arguments left out (`absent`: `missing()` of each,
# named), instead of R's "argument is missing, with no default".
check_supplied <- function(absent, call = rlang::caller_env()) {
  if (any(absent)) {
    args <- names(absent)[absent] # nolint: object_usage_linter. cli.
    kerasmesh_abort("{.arg {args}} must be supplied.", kind = kinds$argument,
                    call = call)
  }
  invisible()
}

check_string <- function(x, arg = rlang::caller_arg(x),
                         call = rlang::caller_env()) {
  if (!is.character(x) || length(x) != 1 || is.na(x) || !nzchar(x)) {
    kerasmesh_abort(
      c("{.arg {arg}} must be a single non-empty string.",
        x = "Received {.obj_type_friendly {x}}."),
      kind = kinds$argument, call = call
    )
  }
  x
}

# Whole numbers from `min` to `max`, returned as an integer: the one check
# for counts, sizes and limits. `max` defaults to R's largest integer, so a
# value an integer can't hold (3e9) is refused instead of becoming NA; pass
# a smaller `max` where a use has a sensible limit.
check_whole <- function(x, min = 1, max = .Machine$integer.max,
                        arg = rlang::caller_arg(x),
                        call = rlang::caller_env()) {
  whole <- is.numeric(x) && length(x) == 1 && !is.na(x) && is.finite(x) &&
    x == round(x)
  if (!whole || x < min) {
    kerasmesh_abort(
      c("{.arg {arg}} must be {whole_description(min)}.",
        x = "Received {.obj_type_friendly {x}}{received_value(x)}."),
      kind = kinds$argument, call = call
    )
  }
  if (x > max) {
    kerasmesh_abort(
      c("{.arg {arg}} must be at most {format_whole(max)}.",
        x = "Received {format_whole(x)}."),
      kind = kinds$argument, call = call
    )
  }
  as.integer(x)
}

# A positive count: `check_whole()` from 1.
check_count <- function(x, max = .Machine$integer.max,
                        arg = rlang::caller_arg(x),
                        call = rlang::caller_env()) {
  check_whole(x, min = 1, max = max, arg = arg, call = call)
}

whole_description <- function(min) {
  if (min == 1) {
    "a positive whole number"
  } else if (min == 0) {
    "a whole number (0 or more)"
  } else {
    paste("a whole number of at least", format_whole(min))
  }
}

format_whole <- function(x) {
  format(x, big.mark = ",", scientific = FALSE, trim = TRUE)
}

# One string from `values`, as rlang::arg_match() but with kerasmesh's class.
# The default (the whole vector of choices) means the first.
check_choice <- function(x, values, arg = rlang::caller_arg(x),
                         call = rlang::caller_env()) {
  if (identical(x, values)) {
    return(values[[1]])
  }
  if (!is.character(x) || length(x) != 1 || is.na(x) || !x %in% values) {
    received <- if (is.character(x) && length(x) == 1 && !is.na(x)) {
      "Received {.val {x}}."
    } else {
      "Received {.obj_type_friendly {x}}{received_value(x)}."
    }
    kerasmesh_abort(
      c("{.arg {arg}} must be one of {.or {.val {values}}}.", x = received),
      kind = kinds$argument, call = call
    )
  }
  x
}

check_flag <- function(x, kind = kinds$argument, arg = rlang::caller_arg(x),
                       call = rlang::caller_env()) {
  if (!is.logical(x) || length(x) != 1 || is.na(x)) {
    kerasmesh_abort(
      c("{.arg {arg}} must be `TRUE` or `FALSE`.",
        x = "Received {.obj_type_friendly {x}}."),
      kind = kind, call = call
    )
  }
  x
}

check_seconds <- function(x, arg = rlang::caller_arg(x),
                          call = rlang::caller_env()) {
  if (!is.numeric(x) || length(x) != 1 || is.na(x) || x <= 0) {
    kerasmesh_abort(
      c("{.arg {arg}} must be a positive number of seconds.",
        x = "Received {.obj_type_friendly {x}}{received_value(x)}."),
      kind = kinds$argument, call = call
    )
  }
  as.numeric(x)
}

# " (3.5)" for short atomic values, so messages show what was received.
received_value <- function(x) {
  if (!is.atomic(x) || length(x) == 0 || length(x) > 4) {
    return("")
  }
  values <- vapply(as.list(x), preview_words, character(1))
  paste0(" (", paste(values, collapse = ", "), ")")
}
