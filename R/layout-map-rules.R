# A layout map's rules: reading them (`[[` resolves a path as Keras does,
# `[`, names(), length(), as.list(), as.data.frame()) and changing them
# (`[[<-`, `[<-`; a new map each time, the Keras map copied in the shim).

#' @export
`[[.kerasmesh_layout_map` <- function(x, i, ...) {
  check_dots_none()
  check_supplied(c(i = missing(i)))
  check_unedited(x)
  path <- check_rule_key(i, "path")
  result <- shim_call("layout.lookup", layout_map = object_py(x),
                      path = path)
  if (is.null(result$key)) NULL else axes_from_python(result$axes)
}

#' @export
`[[<-.kerasmesh_layout_map` <- function(x, i, ..., value) {
  check_dots_none()
  check_supplied(c(i = missing(i)))
  set_one_rule(x, i, value)
}

# `lm[[key]] <- value` (and `lm[key] <- value`), in the words of the
# operator the user wrote (`call`).
set_one_rule <- function(x, i, value, call = rlang::caller_env()) {
  check_unedited(x, call = call)
  local_python_value_in_call(value, frame = call)
  key <- check_rule_key(i, call = call)
  if (is.null(value)) {
    return(new_layout_map(shim_call(
      "layout.remove_rule", layout_map = object_py(x), key = key,
      call = call
    )))
  }
  axes <- axes_for_shim(value, key, call = call)
  new_layout_map(shim_call("layout.set_rule", layout_map = object_py(x),
                           key = key, axes = axes, call = call))
}

# `$<-` and `names<-` would change the R object alone, not the Keras map
# it stands for: refused, with the way that does change it.
#' @export
`$<-.kerasmesh_layout_map` <- function(x, name, value) { # nolint
  kerasmesh_abort(
    c("A layout map's rules are set with {.code [[<-}, not {.code $<-}.",
      x = "Received {.code $<-} of {.val {name}}.",
      i = "Write {.code lm[[\"{name}\"]] <- value}."),
    kind = kinds$layout_key
  )
}

#' @export
`names<-.kerasmesh_layout_map` <- function(x, value) {
  kerasmesh_abort(
    c("A layout map's keys can't be renamed with {.code names<-}.",
      i = "Remove a rule ({.code lm[[\"old\"]] <- NULL}) and add it under its
           new key."),
    kind = kinds$layout_key
  )
}

#' @export
`[<-.kerasmesh_layout_map` <- function(x, i, ..., value) {
  check_dots_none()
  if (missing(i)) {
    kerasmesh_abort(
      c("{.code lm[] <- value} must name the rules' keys.",
        i = "Write {.code lm[keys] <- layouts}; a layout of {.code NULL}
             removes a rule."),
      kind = kinds$layout_key
    )
  }
  check_unedited(x)
  local_python_value_in_call(value)
  if (is.numeric(i) || is.logical(i)) {
    i <- names(x)[check_rule_index(i, length(x))] # as `lm[i]` picks them
  }
  if (length(i) == 1) {
    return(set_one_rule(x, i, value))
  }
  if (is.null(value)) {
    value <- vector("list", length(i)) # as a list's `[<-` NULL removes all
  }
  if (!is.list(value) || length(value) != length(i)) {
    stop_input_type(
      value, problem = paste("Assigning {length(i)} keys needs a list of",
                             "{length(i)} layouts."),
      received = sprintf("Received %d value%s:", length(value),
                         if (length(value) == 1) "" else "s"),
      show_value = FALSE, kind = kinds$layout_axes
    )
  }
  if (length(i) == 0) {
    return(x)
  }
  # One shim call (one copy of the map) for all keys, applied in order as
  # `[[<-` applies one: NULL removes the key. Each key and its layout are
  # checked in turn, as `[[<-` checks them.
  call <- rlang::current_env()
  rules <- lapply(seq_along(i), function(k) {
    key <- check_rule_key(i[[k]], call = call)
    local_python_value_in_call(value[[k]], frame = call)
    axes <- if (!is.null(value[[k]])) {
      axes_for_shim(value[[k]], key, call = call)
    }
    list(key = key, axes = axes)
  })
  new_layout_map(shim_call(
    "layout.set_rules", layout_map = object_py(x),
    keys = lapply(rules, `[[`, "key"),
    layouts = lapply(rules, `[[`, "axes")
  ))
}

#' @export
`[.kerasmesh_layout_map` <- function(x, i, ...) {
  check_dots_none()
  check_unedited(x)
  if (missing(i)) {
    return(x)
  }
  check_rule_index(i, length(x))
  rules <- .subset2(x, "rules")[i]
  unknown <- is.na(names(rules))
  if (any(unknown)) {
    kerasmesh_abort(
      c("Can't select rules that don't exist.",
        x = "Unknown: {.val {i[unknown]}}."),
      kind = kinds$layout_key
    )
  }
  build_layout_map(.subset2(x, "mesh"), rules)
}

#' @export
names.kerasmesh_layout_map <- function(x) {
  names(.subset2(check_unedited(x), "rules"))
}

#' @export
length.kerasmesh_layout_map <- function(x) {
  length(.subset2(check_unedited(x), "rules"))
}

#' @export
as.list.kerasmesh_layout_map <- function(x, ...) {
  check_dots_none()
  .subset2(check_unedited(x), "rules")
}

# One row per rule: its key, and its axes (a list column).
#' @export
as.data.frame.kerasmesh_layout_map <- function(x, row.names = NULL, # nolint
                                               optional = FALSE, ...,
                                               stringsAsFactors = FALSE) { # nolint
  check_dots_none()
  rules <- .subset2(check_unedited(x), "rules")
  out <- data.frame(key = names(rules) %||% character(),
                    stringsAsFactors = FALSE)
  out$axes <- unname(rules)
  plain_frame(out, row.names, stringsAsFactors = stringsAsFactors)
}

# R puts the assigned value itself into the `[[<-` call. When an error is
# raised, rlang 1.0 (and testthat, entracing it) summarises every call for
# the backtrace, asking the value its length, which some Python objects (a
# Keras Variable) answer by raising. kerasmesh_abort() then gives errors an
# empty backtrace instead.
local_python_value_in_call <- function(value, frame = parent.frame()) {
  if (inherits(value, "python.builtin.object")) {
    withr::local_options(list(kerasmesh.empty_trace = TRUE),
                         .local_envir = frame)
  }
  invisible()
}

# Which rules `lm[i]` keeps: keys, or rule numbers as for a list (positive,
# or negative to drop), or logicals.
check_rule_index <- function(i, n, call = rlang::caller_env()) {
  check_index(i, n, "rule keys, rule numbers from 1 to {n} or {n}
              logical{?s}, one per rule", keys = TRUE,
              subject = "The index of a layout map",
              kind = kinds$layout_key, call = call)
}

check_rule_key <- function(i, what = "key", call = rlang::caller_env()) {
  if (!is.character(i) || length(i) != 1 || is.na(i)) {
    stop_input_type(i, "a single string",
                    subject = "A layout rule's {what}", kind = kinds$layout_key,
                    call = call)
  }
  if (!nzchar(trimws(i))) {
    stop_input_type(i, "a string that is not blank",
                    subject = "A layout rule's {what}", kind = kinds$layout_key,
                    call = call)
  }
  i
}
