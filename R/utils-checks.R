# Argument checks that know the caller's argument name, one family in the
# style of rlang's standalone type checks: each `check_*()` returns its
# argument (as an integer where it says so) or reports the problem with
# `stop_input_type()`, the one place that words "must be ...; Received ...".
# Arguments in `...` go on to `stop_input_type()` (`kind`, `way_out`, ...).

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

# Every argument of the caller that has no default supplied, but those in
# `except` (one that an older name can stand for, checked with it): R's
# own "argument is missing" error comes only when the argument is used.
check_required <- function(except = NULL, call = rlang::caller_env(),
                           fn = rlang::caller_fn()) {
  formals <- rlang::fn_fmls(fn)
  required <- names(formals)[vapply(formals, rlang::is_missing, TRUE)]
  required <- setdiff(required, c("...", except))
  absent <- vapply(required, function(arg) {
    eval(rlang::call2("missing", rlang::sym(arg)), call)
  }, TRUE)
  check_supplied(absent, call = call)
}

# The first line of an exported function whose `...` takes nothing: no
# argument in `...` (a misspelt name), none without a default left out.
check_call <- function(call = rlang::caller_env()) {
  check_dots_none(env = call, call = call)
  check_required(call = call, fn = rlang::caller_fn())
}

# The error for an argument of the wrong type or value, worded once:
#   ! <subject> must be <what>.
#   x Received <what `x` is, cli's {.obj_type_friendly}>[ (<its values>)].
#   i <way_out>
# `what`, `subject`, `problem` and `way_out` are cli text interpolated in
# `envir` (the frame that wrote them), where `{arg}` is the argument's
# name, so they can use the caller's variables ("from 0 to {n - 1}").
# `problem` replaces the whole first line where it isn't "<subject> must
# be <what>."; `received` is the word that starts the second; `show_value`
# adds short atomic values (`received_value()`). `kind`: the condition
# kind(s), classes `kerasmesh_error_<kind>` and `kerasmesh_error`.
stop_input_type <- function(x, what = NULL, ..., show_value = TRUE,
                            way_out = NULL, subject = "{.arg {arg}}",
                            problem = NULL, received = "Received",
                            kind = kinds$argument,
                            arg = rlang::caller_arg(x),
                            call = rlang::caller_env(),
                            envir = parent.frame()) {
  rlang::check_dots_empty()
  problem <- problem %||% paste0(subject, " must be ", what, ".")
  value <- if (show_value) "{received_value(input)}" else ""
  message <- c(
    problem,
    x = paste0(received, " {.obj_type_friendly {input}}", value, "."),
    i = way_out
  )
  kerasmesh_abort(message, kind = kind, call = call,
                  .envir = rlang::env(envir, arg = arg, input = x),
                  .frame = parent.frame())
}

check_string <- function(x, ..., arg = rlang::caller_arg(x),
                         call = rlang::caller_env()) {
  if (!is.character(x) || length(x) != 1 || is.na(x) || !nzchar(x)) {
    stop_input_type(x, "a single non-empty string", ..., show_value = FALSE,
                    arg = arg, call = call)
  }
  x
}

# An option that switches something on or off: TRUE or FALSE, `default`
# when unset.
option_flag <- function(name, default, call = rlang::caller_env()) {
  value <- getOption(name, default)
  if (!rlang::is_bool(value)) {
    stop_input_type(value, "TRUE or FALSE",
                    subject = sprintf('{.code getOption("%s")}', name),
                    call = call)
  }
  value
}

# An option that sets a limit: one number of at least 1 (`Inf` for none),
# `default` when unset.
option_number <- function(name, default, call = rlang::caller_env()) {
  value <- getOption(name, default)
  if (!is.numeric(value) || length(value) != 1 || is.na(value) ||
      value < 1) {
    stop_input_type(value, "a positive number",
                    subject = sprintf('{.code getOption("%s")}', name),
                    call = call)
  }
  value
}

# The positions `x[i]` picks among `n` elements, each once: whole numbers
# all from 0 to `n` or all from -`n` to 0 (negative drops), or logicals
# of length 1 or `n`; no NA, no repeat (an object's rules or workers are
# not copied by an index). `single`: one number from 1 to `n`, as
# `x[[i]]` takes. `keys`: names (no NA) pass too, returned as given.
# `what` words the index ("worker numbers from 1 to {n}"), interpolated
# here, where `n` is the count.
check_index <- function(i, n, what, ..., single = FALSE, keys = FALSE,
                        subject = "The index", way_out = NULL,
                        kind = kinds$argument, call = rlang::caller_env()) {
  whole <- is.numeric(i) && !anyNA(i) && all(is.finite(i)) &&
    all(i == round(i))
  ok <- if (keys && is.character(i)) {
    !anyNA(i)
  } else if (single) {
    whole && length(i) == 1 && i >= 1 && i <= n
  } else if (is.numeric(i)) {
    whole && (all(i >= 0 & i <= n) || all(i <= 0 & i >= -n))
  } else {
    is.logical(i) && length(i) %in% c(1, n) && !anyNA(i)
  }
  if (!ok) {
    stop_input_type(i, what, ..., subject = subject, way_out = way_out,
                    kind = kind, call = call)
  }
  if (anyDuplicated(i[i != 0]) && !is.logical(i)) {
    stop_input_type(i, problem = "{subject} must pick each one once.", ...,
                    way_out = way_out, kind = kind, call = call)
  }
  if (is.character(i)) i else seq_len(n)[i]
}

# Whole numbers from `min` to `max`, returned as an integer: the one check
# for counts, sizes, limits and indices (NULL stays NULL where
# `allow_null`). `max` defaults to R's largest integer, so a value an
# integer can't hold (3e9) is refused instead of becoming NA; pass a
# smaller `max` where a use has a sensible limit. `what` words the range
# for every failure (then a value above `max` is reported like any other).
check_whole <- function(x, ..., min = 1, max = .Machine$integer.max,
                        what = NULL, allow_null = FALSE, kind = kinds$argument,
                        arg = rlang::caller_arg(x),
                        call = rlang::caller_env()) {
  if (missing(x)) {
    # Left out by the caller's caller (a required `batch_size`): say so,
    # rather than R's "argument is missing, with no default".
    check_supplied(stats::setNames(TRUE, arg), call = call)
  }
  if (allow_null && is.null(x)) {
    return(NULL)
  }
  whole <- is.numeric(x) && length(x) == 1 && !is.na(x) && is.finite(x) &&
    x == round(x)
  # A `what` that states the range words a number above a `max` given;
  # R's integer bound, the default, has its own message.
  if (!whole || x < min || (!is.null(what) && !missing(max) && x > max)) {
    stop_input_type(x, what %||% whole_description(min), ..., kind = kind,
                    arg = arg, call = call, envir = parent.frame())
  }
  if (x > max) {
    kerasmesh_abort(
      c("{.arg {arg}} must be at most {format_whole(max)}.",
        x = "Received {format_whole(x)}."),
      kind = kind, call = call
    )
  }
  as.integer(x)
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

# A single number from `min` to `max` (above `min` where `exclusive_min`),
# returned as a double; infinite values pass where the range has them.
check_number <- function(x, what, ..., min = -Inf, max = Inf,
                         exclusive_min = FALSE, allow_null = FALSE,
                         arg = rlang::caller_arg(x),
                         call = rlang::caller_env()) {
  if (allow_null && is.null(x)) {
    return(NULL)
  }
  ok <- is.numeric(x) && length(x) == 1 && !is.na(x) && x >= min &&
    x <= max && !(exclusive_min && x == min)
  if (!ok) {
    stop_input_type(x, what, ..., arg = arg, call = call,
                    envir = parent.frame())
  }
  as.numeric(x)
}

# One string from `values`, as rlang::arg_match() but with kerasmesh's class.
# The whole vector of choices means the first where it is the argument's
# default (`all_means_first`); elsewhere (a default of NULL) it is refused.
check_choice <- function(x, values, all_means_first = TRUE,
                         arg = rlang::caller_arg(x),
                         call = rlang::caller_env()) {
  if (all_means_first && identical(x, values)) {
    return(values[[1]])
  }
  if (is.character(x) && length(x) == 1 && !is.na(x) && !x %in% values) {
    kerasmesh_abort(
      c("{.arg {arg}} must be one of {.or {.val {values}}}.",
        x = "Received {.val {x}}."),
      kind = kinds$argument, call = call
    )
  }
  if (!is.character(x) || length(x) != 1 || is.na(x)) {
    stop_input_type(x, "one of {.or {.val {values}}}", arg = arg, call = call)
  }
  x
}

check_flag <- function(x, ..., arg = rlang::caller_arg(x),
                       call = rlang::caller_env()) {
  if (!is.logical(x) || length(x) != 1 || is.na(x)) {
    stop_input_type(x, "`TRUE` or `FALSE`", ..., show_value = FALSE,
                    arg = arg, call = call)
  }
  x
}

# An R value where a Python object is needed.
check_python_object <- function(x, what, ..., arg = rlang::caller_arg(x),
                                call = rlang::caller_env()) {
  if (!inherits(x, "python.builtin.object")) {
    stop_input_type(x, what, ..., arg = arg, call = call,
                    envir = parent.frame())
  }
  invisible(x)
}

# `...` of `env` must be empty: rlang's error, which names what was
# passed, with kerasmesh's classes added.
check_dots_none <- function(env = rlang::caller_env(),
                            call = rlang::caller_env()) {
  tryCatch(
    rlang::check_dots_empty(env = env, call = call),
    rlib_error_dots_nonempty = function(e) {
      class(e) <- c(error_classes(kinds$argument), class(e))
      stop(e)
    }
  )
}

# " (3.5)" for short atomic values, so messages show what was received.
received_value <- function(x) {
  if (!is.atomic(x) || length(x) == 0 || length(x) > 4) {
    return("")
  }
  # cli spells some values itself (`NA`, a character `NA`, `TRUE`, `""`),
  # as vector_words() knows.
  if (grepl("`", cli::format_inline("{.obj_type_friendly {x}}"),
            fixed = TRUE)) {
    return("")
  }
  values <- vapply(as.list(x), preview_words, character(1))
  paste0(" (", paste(values, collapse = ", "), ")")
}

# An object one of kerasmesh's constructors made, refused where it is used
# when it was edited by hand (`cost$memory <- NULL`): `ok` holds one test
# per field, named as the user writes it (`memory`, or `attr(x, "traffic")`
# for an attribute), and the first that fails is named as `<prefix>$field`.
# `what` is what the fields must be: one string, or one per field with
# `default` for the rest.
check_fields <- function(x, ok, what, way_out, prefix = "x",
                         kind = kinds$argument, call = rlang::caller_env()) {
  if (all(ok)) {
    return(invisible(x))
  }
  bad <- names(ok)[!ok][[1]]
  attribute <- regmatches(bad, regexec('^attr\\(x, "(.+)"\\)$', bad))[[1]]
  if (length(attribute)) {
    value <- attr(x, attribute[[2]], exact = TRUE)
    arg <- sub("x", prefix, bad, fixed = TRUE)
  } else {
    value <- .subset2(x, bad)
    arg <- paste0(prefix, "$", bad)
  }
  expected <- if (length(what) == 1) {
    what
  } else if (bad %in% names(what)) {
    what[[bad]]
  } else {
    what[["default"]]
  }
  stop_input_type(value, expected, arg = arg, way_out = way_out, kind = kind,
                  call = call, envir = parent.frame())
}

# A picture's title: `NULL` for the default, or one string.
check_title <- function(x, arg = rlang::caller_arg(x),
                        call = rlang::caller_env()) {
  if (!is.null(x) && (!is.character(x) || length(x) != 1 || is.na(x))) {
    stop_input_type(x, "a single string or `NULL`", arg = arg, call = call)
  }
  x
}
