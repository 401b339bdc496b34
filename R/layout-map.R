#' Create a layout map
#'
#' A layout map assigns layouts to model variables: each rule's key is a
#' regular expression matched against the *whole* variable path (such as
#' `"sequential/dense/kernel"`: `"dense.*kernel"` matches nothing there,
#' `".*dense.*kernel"` does), and its value names, for each dimension of
#' the variable, the mesh axis it is split over (`NA`: not split). Rules are
#' checked when they are added, not when the model trains: every axis must
#' be an axis of the mesh and appear once, and every key must compile as a
#' Python regular expression and must not be able to hang matching (a
#' repeated group holding another repeat, such as `"(a+)+"`, overlapping
#' alternatives inside a repeat, such as `"(a|ab)*"`, or more than four
#' unbounded repeats are refused with `kerasmesh_error_layout_key`).
#'
#' Layout maps have value semantics, like other R objects: assigning a rule
#' returns a modified copy (with a new Keras `LayoutMap` inside) and leaves
#' other copies alone.
#'
#' @param ... The mesh, then rules: `key = axes`. Axes name, for each
#'   dimension, the mesh axis it is split over, in any of these forms:
#'   * a character vector with `NA` for an unsplit dimension
#'     (`c(NA, "model")`);
#'   * a list with `NULL` (`list(NULL, "model")`);
#'   * a Python tuple or list, such as keras3's (and reticulate's)
#'     `tuple(NULL, "model")`;
#'   * a Keras `TensorLayout` (its axes are used).
#'
#'   Keras 3.15 splits a dimension over one mesh axis at most, so several
#'   axes for one dimension (`"data+model"`, `list(c("data", "model"))`)
#'   are an error here, as in [sharding_picture()]. Any string works as a
#'   key, also `"mesh"` or `"m"`: the mesh comes first, unnamed.
#' @param mesh A [device_mesh()] (or a Keras `DeviceMesh`). Usually given
#'   first, unnamed; it comes after `...` so that no rule key can be
#'   mistaken for it.
#' @return A `kerasmesh_layout_map`. `r_to_py()` (reticulate's) gives the Keras
#'   `LayoutMap`.
#'
#' @section Working with rules:
#' * `lm[["key"]] <- axes` or `lm["key"] <- axes` adds a rule (axes in
#'   any form `...` takes), and `lm[keys] <- list(...)` several; assigning
#'   `NULL` removes one (`lm[keys] <- NULL` several). As in Keras, a key
#'   already present is an error (remove it first), and so is removing a
#'   key the map does not have (a misspelt key would leave its rule in
#'   place).
#' * `lm[["sequential/dense/kernel"]]` resolves a variable path as Keras
#'   does (the exact key first, then every key as a full regular-expression
#'   match; several matches are an error) and returns its axes, or `NULL`
#'   when no rule matches.
#' * `names(lm)` gives the keys, `length(lm)` the number of rules,
#'   `as.list(lm)` the rules, `as.data.frame(lm)` one row per rule, and
#'   `lm[keys]` (or rule numbers, as for a list) a layout map with only
#'   those rules.
#' @export
#' @examplesIf keras_available()
#' simulate_devices(8)
#' mesh <- device_mesh(c(data = 2, model = 4))
#' lm <- layout_map(mesh, ".*dense.*kernel" = c(NA, "model"))
#' lm[[".*dense.*bias"]] <- "model"
#' lm
#' lm[["sequential/dense/kernel"]]
#' # The book's way, with keras3's tuple() (which is reticulate's). A rule
#' # is replaced by removing it, then assigning it again:
#' lm[".*dense.*kernel"] <- NULL
#' lm[".*dense.*kernel"] <- reticulate::tuple(NULL, "model")
#' lm
#' # Removing a rule the map does not have is an error (a misspelt key):
#' try(lm["dense.*kernel"] <- NULL)
layout_map <- function(..., mesh) {
  rules <- list(...)
  first_unnamed <- length(rules) > 0 && !nzchar(names(rules)[1] %||% "")
  if (missing(mesh)) {
    mesh <- NULL
  } else if (first_unnamed && is_device_mesh(rules[[1]]) &&
             is_device_mesh(mesh)) {
    kerasmesh_abort(
      c("The mesh must be given once.",
        x = "Received a mesh first and {.arg mesh} as well.",
        i = "Write {.code layout_map(mesh, ...)}."),
      kind = kinds$argument
    )
  } else if (first_unnamed && is_device_mesh(rules[[1]]) &&
             !is_device_mesh(mesh)) {
    # layout_map(m, mesh = axes): a rule whose key is "mesh", in its place.
    rules <- c(rules, list(mesh = mesh))
    at <- match(names(rules), names(sys.call())[-1])
    if (!anyNA(at)) {
      rules <- rules[order(at)]
    }
    mesh <- NULL
  }
  # The mesh is the first argument without a name, also after rules
  # (`layout_map("a" = axes, mesh)`).
  at <- which(!nzchar(names(rules) %||% character(length(rules))))
  if (is.null(mesh) && length(at) &&
        (at[[1]] == 1 || is_device_mesh(rules[[at[[1]]]]))) {
    mesh <- rules[[at[[1]]]]
    rules <- rules[-at[[1]]]
  }
  mesh <- as_device_mesh(mesh)
  keys <- names(rules) %||% character(length(rules))
  keys[is.na(keys)] <- ""
  if (any(!nzchar(trimws(keys)))) {
    rules_without <- function(which, what) {
      # Positions as text: cli counts a vector's length, not its value.
      at <- as.character(which(which))
      if (length(at)) {
        cli::format_inline("Rule{?s} {at} {?has/have} ", what, ".")
      }
    }
    kerasmesh_abort(
      c("Every rule in {.arg ...} must be named by its key.",
        x = rules_without(!nzchar(keys), "no key"),
        x = rules_without(nzchar(keys) & !nzchar(trimws(keys)),
                          "a key of spaces only"),
        i = 'Write rules as {.code ".*dense.*kernel" = c(NA, "model")}.'),
      kind = kinds$layout_key
    )
  }
  build_layout_map(mesh, rules)
}

#' @export
format.kerasmesh_layout_map <- function(x, ...) {
  check_dots_none()
  check_unedited(x)
  with_edits_named(x, {
    rules <- .subset2(x, "rules")
    n <- length(rules)
    header <- sprintf(
      "<kerasmesh_layout_map> %s on %s", count_text(n, "rule"),
      mesh_phrase(.subset2(x, "mesh"))
    )
    if (n == 0) {
      return(header)
    }
    # A key with a line break or tab prints escaped, as R writes it.
    keys <- names(rules)
    control <- grepl("[[:cntrl:]]", keys)
    keys[control] <- encodeString(keys[control], quote = '"')
    table <- data.frame(
      key = keys, axes = vapply(rules, format_axes, character(1)),
      stringsAsFactors = FALSE
    )
    c(header, format_table(table))
  })
}

#' @export
print.kerasmesh_layout_map <- function(x, ...) {
  writeLines(format(x, ...))
  invisible(x)
}

# A layout map with `rules` (a named list of axes) on `mesh`. Not through
# layout_map(), whose argument matching would see a key such as "mesh".
build_layout_map <- function(mesh, rules, call = rlang::caller_env()) {
  keys <- names(rules) %||% character()
  layouts <- Map(function(axes, key) axes_for_shim(axes, key, call = call),
                 rules, keys)
  new_layout_map(shim_call(
    "layout.new_layout_map", mesh = object_py(mesh, call = call),
    keys = as.list(keys),
    layouts = unname(layouts), call = call
  ))
}

is_device_mesh <- function(x) {
  inherits(x, "kerasmesh_device_mesh") || object_type(x) == "device_mesh"
}

new_layout_map <- function(desc) {
  rules <- lapply(desc$axes, axes_from_python)
  names(rules) <- as.character(unlist(desc$keys))
  stamp_fields(structure(
    list(
      py = desc$layout_map,
      mesh = new_device_mesh(desc$mesh),
      rules = rules
    ),
    class = c("kerasmesh_layout_map", "kerasmesh_object")
  ))
}

#' Use a Keras layout map as a kerasmesh one
#'
#' Wraps a Keras `LayoutMap` from anywhere, such as the one a keras-hub
#' backbone's `get_layout_map()` returns, so that its rules can be read and
#' changed from R (`lm[[key]] <- axes`), for example to paste the fixes
#' that [layout_fix()] suggests. The rules are copied on the first change;
#' the Keras object is not modified.
#'
#' @param x A Keras `LayoutMap`, a [layout_map()] (returned as is), or a
#'   [search_layout()] result (its layout map).
#' @param ... Must be empty.
#' @param arg,call For error messages.
#' @return A `kerasmesh_layout_map`.
#' @export
#' @examplesIf keras_available()
#' simulate_devices(8)
#' mesh <- device_mesh(c(batch = 2, model = 4))
#' library(reticulate, include.only = c("import", "r_to_py"))
#' keras <- import("keras")
#' keras_map <- keras$distribution$LayoutMap(r_to_py(mesh))
#' lm <- as_layout_map(keras_map)
#' lm[[".*kernel"]] <- c(NA, "model")
#' lm
as_layout_map <- function(x, ..., arg = rlang::caller_arg(x),
                          call = rlang::caller_env()) {
  check_call()
  if (!identical(make.names(arg), arg)) {
    arg <- "x" # a value typed in the call (`as_layout_map("x")`)
  }
  if (inherits(x, "kerasmesh_layout_map")) {
    return(check_unedited(x, prefix = arg, call = call))
  }
  if (inherits(x, "kerasmesh_layout_search")) {
    check_search_object(x, prefix = arg, call = call)
    check_unedited(x, prefix = arg, call = call)
    return(.subset2(x, "layout_map"))
  }
  # The shim decides whether a Python object is a Keras LayoutMap.
  if (inherits(x, "python.builtin.object")) {
    return(new_layout_map(shim_call("layout.describe_layout_map",
                                    layout_map = x, call = call)))
  }
  stop_input_type(x, "a layout map", show_value = FALSE,
                  way_out = "Create one with {.fn layout_map}.",
                  kind = kinds$layout_map, arg = arg, call = call)
}

format_axes <- function(axes) {
  shown <- ifelse(is.na(axes), "NA", encodeString(axes, quote = '"'))
  paste0("(", paste(shown, collapse = ", "), ")")
}
