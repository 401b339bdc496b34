# Objects edited by hand. Every object kerasmesh returns carries a
# fingerprint of its fields (list elements or data frame columns,
# attributes and the class), taken when it was made. Where it is printed,
# plotted, summarised or used, an object whose fields changed is refused,
# naming the first (check_unedited()); a field the user added is kept. A
# subset of a data frame's rows is made anew (rows_as_made()). An R error
# or warning that an edit raises deeper, while the object is printed,
# becomes the classed error naming the field (with_edits_named()).

# The function that makes each object, for the way out of the error.
object_makers <- c(
  kerasmesh_checkpoint_info = "checkpoint_info",
  kerasmesh_cost_traffic = "summary",
  kerasmesh_device_mesh = "device_mesh",
  kerasmesh_device_topology = "device_topology",
  kerasmesh_data_parallel = "data_parallel",
  kerasmesh_model_parallel = "model_parallel",
  kerasmesh_launch = "launch_local",
  kerasmesh_layout_comparison = "compare_layouts",
  kerasmesh_layout_cost = "layout_cost",
  kerasmesh_layout_map = "layout_map",
  kerasmesh_layout_plan = "layout_plan",
  kerasmesh_layout_plan_summary = "summary",
  kerasmesh_layout_search = "search_layout",
  kerasmesh_sharding = "variable_sharding",
  kerasmesh_sharding_picture = "sharding_picture"
)

# `x` with the fingerprint of its fields as they are now.
stamp_fields <- function(x) {
  attr(x, "kerasmesh_fields") <- NULL
  attr(x, "kerasmesh_fields") <- field_fingerprints(x)
  x
}

# One fingerprint per field, named as the user writes it ("x$path",
# "x[[2]]", 'attr(x, "summary")'). A Python object's is its class (its R
# side changes as reticulate uses it, and saveRDS() keeps no Python
# object), and an object kerasmesh made that is a field of another (a
# search's cost) is fingerprinted by its own fields.
field_fingerprints <- function(x) {
  vapply(object_fields(x), fingerprint, "")
}

# Serialized as R 3.5 did, so a value reads the same whether R holds it
# compactly or written out (printing a matrix writes it out).
fingerprint <- function(v) {
  if (is.environment(v)) {
    rlang::hash(class(v))
  } else if (!is.null(attr(v, "kerasmesh_fields", exact = TRUE))) {
    rlang::hash(field_fingerprints(v))
  } else {
    rlang::hash(serialize(v, NULL, version = 2))
  }
}

object_fields <- function(x) {
  elements <- as.list(unclass(x))
  keys <- names(elements) %||% rep("", length(elements))
  # `x$key` reads the first of repeated keys; the others by position.
  names(elements) <- ifelse(nzchar(keys) & !duplicated(keys),
                            paste0("x$", keys),
                            sprintf("x[[%d]]", seq_along(elements)))
  attrs <- attributes(x)
  attrs <- attrs[setdiff(names(attrs), c("names", "class", "row.names",
                                         "dim", "dimnames",
                                         "kerasmesh_fields",
                                         "kerasmesh_own"))]
  names(attrs) <- sprintf('attr(x, "%s")', names(attrs))
  c(elements, attrs, list("class(x)" = class(x)))
}

# The fields of `x` changed (or removed, or added) since it was stamped;
# none for an object that carries no fingerprint.
changed_fields <- function(x) {
  made <- attr(x, "kerasmesh_fields", exact = TRUE)
  if (!is_fingerprint(made)) {
    return(character())
  }
  now <- field_fingerprints(x)
  kept <- now[names(made)]
  c(names(made)[is.na(kept) | kept != made], setdiff(names(now), names(made)))
}

# Runs `code`, which prints, plots or summarises `x` in the frame `call`
# of one of its methods: an R error or warning it raises on an edited `x`
# becomes the error naming the field. kerasmesh's own conditions pass,
# but for errors raised below the method itself, which name the method's
# own variables, not what the user typed.
with_edits_named <- function(x, code, prefix = "x",
                             call = rlang::caller_env()) {
  force(x) # as it was given, whatever the method makes of it
  own <- rlang::error_call(call)
  named <- function(cnd) {
    own_error <- inherits(cnd, "kerasmesh_error") &&
      identical(conditionCall(cnd), own)
    passes <- c("kerasmesh_warning", "lifecycle_warning_deprecated")
    if (own_error || inherits(cnd, passes)) {
      return()
    }
    changed <- changed_fields(x)
    if (length(changed)) {
      abort_edited(x, changed[[1]], prefix, call, parent = cnd)
    }
  }
  withCallingHandlers(code, error = named, warning = named)
}

# Refuses an object edited by hand where it is used: any field changed or
# removed (one added is the user's own), and one whose fingerprint was
# removed or replaced.
check_unedited <- function(x, prefix = "x", call = rlang::caller_env()) {
  made <- attr(x, "kerasmesh_fields", exact = TRUE)
  changed <- if (!is_fingerprint(made)) {
    'attr(x, "kerasmesh_fields")'
  } else {
    intersect(changed_fields(x), names(made))
  }
  if (length(changed)) {
    abort_edited(x, changed[[1]], prefix, call)
  }
  invisible(x)
}

# What stamp_fields() writes: one hash per named field.
is_fingerprint <- function(made) {
  is.character(made) && !is.null(names(made)) && !anyNA(made)
}

# `out`, a subset of `x`, one of kerasmesh's data frames (a comparison, a
# sharding report, a summary of traffic): its rows with every column and
# attribute (but those `of_all_rows`, which the subset dropped) are the
# object again, made anew; any other subset is a plain data frame (or the
# column asked for). `x` itself must be as made, or the subset would pass
# its edits on. Each row is one of `x`'s rows, once (`key` names them):
# an index past the rows or NA gives rows of NA, which are refused.
rows_as_made <- function(x, out, key, of_all_rows = character(),
                         call = rlang::caller_env()) {
  if (!is.data.frame(out)) {
    return(out)
  }
  keys <- out[[key]]
  if (!is.null(keys) && (anyNA(keys) || anyDuplicated(keys))) {
    kerasmesh_abort(
      c("Rows of a {.cls {class(x)[[1]]}} must be its own rows, once each.",
        x = if (anyNA(keys)) "An index picks a row that is not there."
            else "An index picks {.val {keys[duplicated(keys)][[1]]}} twice.",
        i = "It has {nrow(x)} row{?s}; pick them by number or by
             {.code x[x${key} %in% names, ]}."),
      kind = kinds$argument, call = call
    )
  }
  kept <- setdiff(names(attributes(x)), of_all_rows)
  whole <- identical(names(out), names(x)) &&
    all(kept %in% names(attributes(out)))
  if (whole) stamp_fields(out) else plain_frame(out)
}

# `x[i, j, drop =]` of a data frame, checked first thing in its `[`
# method: another named argument is refused (R's own error would be
# "unused argument").
check_subset_names <- function(call = rlang::caller_env()) {
  given <- names(as.list(sys.call(sys.parent())))
  extra <- setdiff(given, c("", "drop"))
  if (length(extra)) {
    kerasmesh_abort(
      c("A subset takes rows, columns and {.arg drop}.",
        x = "Received {.arg {extra}}."),
      kind = kinds$argument, call = call
    )
  }
}

# as.data.frame() and rbind() of kerasmesh's data frames: plain data
# frames, without the attributes that describe one object's rows. R's own
# arguments are taken (data.frame() passes `optional` and
# `stringsAsFactors`); no others.
#' @rawNamespace S3method(as.data.frame,kerasmesh_layout_plan,plain_frame)
#' @rawNamespace S3method(as.data.frame,kerasmesh_layout_comparison,plain_frame)
#' @rawNamespace S3method(as.data.frame,kerasmesh_sharding,plain_frame)
#' @rawNamespace S3method(as.data.frame,kerasmesh_cost_traffic,plain_frame)
plain_frame <- function(x, row.names = NULL, optional = FALSE, ..., # nolint
                        stringsAsFactors = FALSE) { # nolint
  check_dots_none()
  attributes(x) <- c(attributes(x)[c("names", "row.names")],
                     list(class = "data.frame"))
  if (!is.null(row.names)) {
    row.names(x) <- row.names
  }
  if (isTRUE(stringsAsFactors)) {
    text <- vapply(x, is.character, TRUE)
    x[text] <- lapply(x[text], factor)
  }
  x
}

#' @rawNamespace S3method(rbind,kerasmesh_layout_plan,rbind_plain)
#' @rawNamespace S3method(rbind,kerasmesh_layout_comparison,rbind_plain)
#' @rawNamespace S3method(rbind,kerasmesh_sharding,rbind_plain)
#' @rawNamespace S3method(rbind,kerasmesh_cost_traffic,rbind_plain)
rbind_plain <- function(..., deparse.level = 1) { # nolint
  frames <- lapply(list(...), function(x) {
    if (is.data.frame(x)) plain_frame(x) else x
  })
  do.call(rbind, c(frames, list(deparse.level = deparse.level)))
}

# The function that makes `x`, as message text ("`device_mesh()`"); a
# class changed by hand may name none: then the words are general.
maker_text <- function(x) {
  maker <- object_makers[intersect(class(x), names(object_makers))]
  if (length(maker)) {
    cli::format_inline("{.fn {maker[[1]]}}")
  } else {
    "the kerasmesh function that made it"
  }
}

abort_edited <- function(x, field, prefix, call, parent = NULL) {
  fields <- object_fields(x)
  # nolint start: object_usage_linter. cli reads them.
  value <- if (field %in% names(fields)) fields[[field]]
  maker <- maker_text(x)
  arg <- if (startsWith(field, "attr(x,") || startsWith(field, "class(x")) {
    sub("(x", paste0("(", prefix), field, fixed = TRUE)
  } else {
    paste0(prefix, substring(field, 2))
  }
  # nolint end
  kerasmesh_abort(
    c("{.arg {arg}} must be what {maker} returns.",
      x = "Received {.obj_type_friendly {value}}{received_value(value)},
           changed by hand.",
      i = "Make it again with {maker}."),
    kind = kinds$argument, parent = parent, call = call
  )
}
