# Renamed arguments and functions keep working for one release, in the
# style of the lifecycle package: the old name gives a warning of class
# `kerasmesh_warning_deprecated` that names the new one, and an argument
# given under both names is an error of class `kerasmesh_error_deprecated`
# saying which to keep. vignette("vocabulary") lists every rename. A
# function whose `device_memory` became `memory` declares
# `device_memory = deprecated()` after `memory` and starts with
# `memory <- renamed_arg("memory", "device_memory")`.

# The default of an argument's old name: missing, so that `missing()` tells
# whether the caller used it.
deprecated <- function() rlang::missing_arg()

# The value the calling function should use for its argument `new`: the
# one given under the old name `old` (with a deprecation warning) when
# only that was given, else its own.
renamed_arg <- function(new, old, env = rlang::caller_env(),
                        call = env) {
  given <- function(name) !eval(rlang::call2("missing", as.name(name)), env)
  if (!given(old)) {
    return(get(new, envir = env))
  }
  fn <- renamed_caller(env) # nolint: object_usage_linter. cli reads it.
  if (given(new)) {
    kerasmesh_abort(
      c("Can't use both {.arg {new}} and its old name {.arg {old}}.",
        i = "Keep {.arg {new}}: {.arg {old}} of {.fn {fn}} is deprecated."),
      kind = kinds$deprecated, call = call
    )
  }
  kerasmesh_warn(
    c("The {.arg {old}} argument of {.fn {fn}} is deprecated.",
      i = "Please use the {.arg {new}} argument instead; {.arg {old}}
           will be removed in the next release."),
    kind = kinds$deprecated, old = old, new = new
  )
  get(old, envir = env)
}

# The name the caller's caller typed for argument `new`: `old` when it
# used the deprecated name (and not the new one), else `new`. For the
# argument checks that follow renamed_arg(), so that an error names the
# argument as written: `plot(cost, device_memory = "lots")` is told about
# `device_memory`.
typed_name <- function(new, old, env = rlang::caller_env()) {
  given <- function(name) !eval(rlang::call2("missing", as.name(name)), env)
  if (given(old) && !given(new)) old else new
}

# Warns that function `old` was renamed `new`; called first in the old
# function, which then calls the new one. The old function has the new
# one's arguments, each passed on, so that anything the new one takes
# works under the old name too.
renamed_function <- function(old, new) {
  kerasmesh_warn(
    c("{.fn {old}} is deprecated.",
      i = "Please use {.fn {new}} instead; {.fn {old}} will be removed in
           the next release."),
    kind = kinds$deprecated, old = old, new = new
  )
}

# `x`, an argument's value, with its deprecated value `old` replaced by
# `new` (and a warning saying so); any other value unchanged.
renamed_value <- function(x, old, new, arg = rlang::caller_arg(x),
                          env = rlang::caller_env()) {
  if (!identical(x, old)) {
    return(x)
  }
  fn <- renamed_caller(env) # nolint: object_usage_linter. cli.
  kerasmesh_warn(
    c("{.code {arg} = {.str {old}}} of {.fn {fn}} is deprecated.",
      i = "Please use {.code {arg} = {.str {new}}} instead; {.str {old}}
           will be removed in the next release."),
    kind = kinds$deprecated, old = old, new = new
  )
  new
}

# Warns that function `old` is deprecated without a replacement in
# kerasmesh; `instead` (cli text) says what to do.
deprecated_function <- function(old, instead) {
  kerasmesh_warn(
    c("{.fn {old}} is deprecated and will be removed in the next release.",
      i = instead),
    kind = kinds$deprecated, old = old
  )
}

# The name of the function whose frame is `env`, for the messages: for a
# method of a kerasmesh class, its generic ("format", not
# "format.kerasmesh_layout_cost"), as the user called it.
renamed_caller <- function(env) {
  name <- rlang::call_name(rlang::frame_call(env))
  if (is.null(name)) "the function" else sub("[.]kerasmesh_\\w+$", "", name)
}
