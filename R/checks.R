# Argument checks that know the caller's argument name.

check_string <- function(x, arg = rlang::caller_arg(x),
                         call = rlang::caller_env()) {
  if (!is.character(x) || length(x) != 1 || is.na(x) || !nzchar(x)) {
    kerasmesh_abort(
      c("{.arg {arg}} must be a single non-empty string.",
        x = "Received {.obj_type_friendly {x}}."),
      kind = "argument", call = call
    )
  }
  x
}

check_count <- function(x, arg = rlang::caller_arg(x),
                        call = rlang::caller_env()) {
  if (!is.numeric(x) || length(x) != 1 || is.na(x) || !is.finite(x) ||
      x < 1 || x != round(x)) {
    kerasmesh_abort(
      c("{.arg {arg}} must be a positive whole number.",
        x = "Received {.obj_type_friendly {x}}{received_value(x)}."),
      kind = "argument", call = call
    )
  }
  as.integer(x)
}

check_flag <- function(x, arg = rlang::caller_arg(x),
                       call = rlang::caller_env()) {
  if (!is.logical(x) || length(x) != 1 || is.na(x)) {
    kerasmesh_abort(
      c("{.arg {arg}} must be `TRUE` or `FALSE`.",
        x = "Received {.obj_type_friendly {x}}."),
      kind = "argument", call = call
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
      kind = "argument", call = call
    )
  }
  as.numeric(x)
}

# " (3.5)" for short atomic values, so messages show what was received.
received_value <- function(x) {
  if (is.atomic(x) && length(x) >= 1 && length(x) <= 4) {
    paste0(" (", paste(format(x), collapse = ", "), ")")
  } else {
    ""
  }
}

`%||%` <- function(x, y) if (is.null(x)) y else x
