#' Create a layout map
#'
#' A layout map assigns layouts to model variables: each rule's key is a
#' regular expression matched against variable paths (such as
#' `"sequential/dense/kernel"`), and its value names, for each dimension of
#' the variable, the mesh axis it is split over (`NA`: not split). Rules are
#' checked when they are added, not when the model trains: every axis must
#' be an axis of the mesh and appear once, and every key must compile as a
#' Python regular expression.
#'
#' Layout maps have value semantics, like other R objects: assigning a rule
#' returns a modified copy (with a new Keras `LayoutMap` inside) and leaves
#' other copies alone.
#'
#' @param mesh A [device_mesh()].
#' @param ... Rules, `key = axes`. Axes are a character vector with `NA`
#'   for an unsplit dimension (`c(NA, "model")`), or a list with `NULL`
#'   (`list(NULL, "model")`).
#' @return A `kerasmesh_layout_map`. [reticulate::r_to_py()] gives the Keras
#'   `LayoutMap`.
#'
#' @section Working with rules:
#' * `lm[["key"]] <- axes` or `lm["key"] <- axes` adds a rule; assigning
#'   `NULL` removes one. A key that is already present is an error: remove
#'   it first.
#' * `lm[["sequential/dense/kernel"]]` resolves a variable path as Keras
#'   does (the exact key first, then every key as a full regular-expression
#'   match; several matches are an error) and returns its axes, or `NULL`
#'   when no rule matches.
#' * `names(lm)` gives the keys, `length(lm)` the number of rules,
#'   `as.list(lm)` the rules, and `lm[keys]` a layout map with only those
#'   rules.
#' @export
#' @examplesIf keras_available()
#' simulate_devices(8)
#' mesh <- device_mesh(c(data = 2, model = 4))
#' lm <- layout_map(mesh, "dense.*kernel" = c(NA, "model"))
#' lm[["dense.*bias"]] <- "model"
#' lm
#' lm[["sequential/dense/kernel"]]
layout_map <- function(mesh, ...) {
  mesh <- as_device_mesh(mesh)
  rules <- list(...)
  keys <- names(rules)
  if (length(rules) > 0 && (is.null(keys) || any(keys == ""))) {
    kerasmesh_abort(
      c("Every rule in {.arg ...} must be named by its key.",
        x = "Rule{?s} {which(if (is.null(keys)) TRUE else keys == '')}
             {?has/have} no key.",
        i = 'Write rules as {.code "dense.*kernel" = c(NA, "model")}.'),
      kind = "layout_key"
    )
  }
  layouts <- Map(as_layout_axes, rules, keys %||% character())
  new_layout_map(shim_call(
    "layout.new_layout_map", .subset2(mesh, "py"), as.list(keys), unname(layouts)
  ))
}

#' @export
`[[.kerasmesh_layout_map` <- function(x, i, ...) {
  path <- check_rule_key(i, "path")
  result <- shim_call("layout.lookup", .subset2(x, "py"), path)
  if (is.null(result$key)) NULL else axes_from_python(result$axes)
}

#' @export
`[[<-.kerasmesh_layout_map` <- function(x, i, value) {
  key <- check_rule_key(i)
  if (is.null(value)) {
    return(new_layout_map(shim_call(
      "layout.remove_rule", .subset2(x, "py"), key
    )))
  }
  new_layout_map(shim_call(
    "layout.set_rule", .subset2(x, "py"), key, as_layout_axes(value, key)
  ))
}

#' @export
`[<-.kerasmesh_layout_map` <- function(x, i, value) {
  if (length(i) == 1) {
    x[[i]] <- value
    return(x)
  }
  if (!is.list(value) || length(value) != length(i)) {
    kerasmesh_abort(
      c("Assigning {length(i)} keys needs a list of {length(i)} layouts.",
        x = "Received {.obj_type_friendly {value}}."),
      kind = "layout_axes"
    )
  }
  for (k in seq_along(i)) {
    x[[i[[k]]]] <- value[[k]]
  }
  x
}

#' @export
`[.kerasmesh_layout_map` <- function(x, i) {
  rules <- .subset2(x, "rules")[i]
  unknown <- is.na(names(rules))
  if (any(unknown)) {
    kerasmesh_abort(
      c("Can't select rules that don't exist.",
        x = "Unknown: {.val {i[unknown]}}."),
      kind = "layout_key"
    )
  }
  rlang::inject(layout_map(.subset2(x, "mesh"), !!!rules))
}

#' @export
names.kerasmesh_layout_map <- function(x) {
  names(.subset2(x, "rules"))
}

#' @export
length.kerasmesh_layout_map <- function(x) {
  length(.subset2(x, "rules"))
}

#' @export
as.list.kerasmesh_layout_map <- function(x, ...) {
  .subset2(x, "rules")
}

#' @export
format.kerasmesh_layout_map <- function(x, ...) {
  rules <- .subset2(x, "rules")
  n <- length(rules)
  header <- sprintf(
    "<kerasmesh_layout_map> %d rule%s on a %s", n, if (n == 1) "" else "s",
    mesh_summary(.subset2(x, "mesh"))
  )
  if (n == 0) {
    return(header)
  }
  axes <- vapply(rules, format_axes, character(1))
  keys <- names(rules)
  key_width <- max(nchar(c("key", keys)))
  c(
    header,
    paste0("  ", pad_right("key", key_width), "  axes"),
    paste0("  ", pad_right(keys, key_width), "  ", axes)
  )
}

#' @export
print.kerasmesh_layout_map <- function(x, ...) {
  writeLines(format(x, ...))
  invisible(x)
}

new_layout_map <- function(desc) {
  rules <- lapply(desc$axes, axes_from_python)
  names(rules) <- as.character(unlist(desc$keys))
  structure(
    list(
      py = desc$layout_map,
      mesh = new_device_mesh(desc$mesh),
      rules = rules
    ),
    class = c("kerasmesh_layout_map", "kerasmesh_object")
  )
}

#' Use a Keras layout map as a kerasmesh one
#'
#' Wraps a Keras `LayoutMap` from anywhere, such as the one a keras-hub
#' backbone's `get_layout_map()` returns, so that its rules can be read and
#' changed from R (`lm[[key]] <- axes`), for example to paste the fixes
#' that [layout_fix()] suggests. The rules are copied on the first change;
#' the Keras object is not modified.
#'
#' @param x A Keras `LayoutMap`, or a [layout_map()] (returned as is).
#' @param arg,call For error messages.
#' @return A `kerasmesh_layout_map`.
#' @export
#' @examplesIf keras_available()
#' simulate_devices(8)
#' mesh <- device_mesh(c(batch = 2, model = 4))
#' keras <- reticulate::import("keras")
#' keras_map <- keras$distribution$LayoutMap(reticulate::r_to_py(mesh))
#' lm <- as_layout_map(keras_map)
#' lm[[".*kernel"]] <- c(NA, "model")
#' lm
as_layout_map <- function(x, arg = rlang::caller_arg(x),
                          call = rlang::caller_env()) {
  if (inherits(x, "kerasmesh_layout_map")) {
    return(x)
  }
  # The shim decides whether a Python object is a Keras LayoutMap.
  if (inherits(x, "python.builtin.object")) {
    return(new_layout_map(shim_call("layout.describe_layout_map", x,
                                    call = call)))
  }
  kerasmesh_abort(
    c("{.arg {arg}} must be a layout map.",
      x = "Received {.obj_type_friendly {x}}.",
      i = "Create one with {.fn layout_map}."),
    kind = "layout_map", call = call
  )
}

# R axes (character with NA, or list with NULL) as a list for a Python tuple.
as_layout_axes <- function(value, key, call = rlang::caller_env()) {
  if (is.logical(value) && all(is.na(value))) {
    value <- as.character(value)
  }
  if (is.character(value)) {
    return(na_to_null(value))
  }
  if (is.list(value)) {
    return(lapply(value, function(a) {
      if (length(a) == 1 && is.na(a)) NULL else a
    }))
  }
  kerasmesh_abort(
    c("The layout for {.val {key}} must be axis names, with NA for an
       unsplit dimension.",
      x = "Received {.obj_type_friendly {value}}.",
      i = 'For example {.code c(NA, "model")}.'),
    kind = "layout_axes", call = call
  )
}

check_rule_key <- function(i, what = "key", call = rlang::caller_env()) {
  if (!is.character(i) || length(i) != 1 || is.na(i) || !nzchar(i)) {
    kerasmesh_abort(
      c("A layout rule's {what} must be a single non-empty string.",
        x = "Received {.obj_type_friendly {i}}{received_value(i)}."),
      kind = "layout_key", call = call
    )
  }
  i
}

format_axes <- function(axes) {
  shown <- ifelse(is.na(axes), "NA", paste0('"', axes, '"'))
  paste0("(", paste(shown, collapse = ", "), ")")
}
