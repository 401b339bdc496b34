# Methods every kerasmesh object shares where it has none of its own:
# str() and summary() of its fields, a plot() that says which picture
# there is, and c(), `[`, `length<-`, as.data.frame(), sorting and
# operators refused on meshes and distributions (layout maps have their
# own `[` and as.data.frame()); c(), as.data.frame(), sorting and
# operators refused on the other objects that are lists of fields.

# str() and summary() read an object's fields by position, which `[[` of a
# layout map takes for rule paths: meshes, layout maps and distributions
# (class `kerasmesh_object`) show their fields as lists.
#' @rawNamespace S3method(utils::str, kerasmesh_object)
str.kerasmesh_object <- function(object, ...) {
  utils::str(unclass(object), ...)
}

# summary() of an object with no summary of its own: R's summary of its
# fields (a list's, or a data frame's columns), once the object is
# checked; no argument is taken that would be ignored.
#' @rawNamespace S3method(summary,kerasmesh_object,summary_fields)
#' @rawNamespace S3method(summary,kerasmesh_device_topology,summary_fields)
#' @rawNamespace S3method(summary,kerasmesh_layout_comparison,summary_fields)
#' @rawNamespace S3method(summary,kerasmesh_cost_traffic,summary_fields)
#' @rawNamespace S3method(summary,kerasmesh_layout_plan_summary,summary_fields)
#' @rawNamespace S3method(summary,kerasmesh_sharding,summary_fields)
#' @rawNamespace S3method(summary,kerasmesh_sharding_picture,summary_fields)
#' @rawNamespace S3method(summary,kerasmesh_checkpoint_info,summary_fields)
#' @rawNamespace S3method(summary,kerasmesh_launch,summary_fields)
summary_fields <- function(object, ...) {
  check_dots_none()
  check_unedited(object, prefix = "object")
  fields <- unclass(object)
  attributes(fields) <- attributes(object)[
    intersect(names(attributes(object)), c("names", "row.names"))
  ]
  if (is.data.frame(object)) {
    class(fields) <- "data.frame"
  }
  summary(fields)
}

# An object with no picture of its own: the error says which there is.
abort_no_picture <- function(x, way_out, call = rlang::caller_env()) {
  kerasmesh_abort(
    c("A {.cls {class(x)[[1]]}} has no picture of its own.", i = way_out),
    kind = kinds$argument, call = call
  )
}

# A mesh draws itself (plot.kerasmesh_device_mesh()); a layout map or a
# distribution does not.
#' @export
plot.kerasmesh_object <- function(x, ...) {
  abort_no_picture(x, "Plot its mesh ({.code plot(x$mesh)}), or one
                       variable's shards with {.fn sharding_picture}.")
}

#' @export
plot.kerasmesh_device_topology <- function(x, ...) {
  abort_no_picture(x, "Print it, or plot what a layout costs on it
                       ({.code plot(layout_cost(..., topology = x))}).")
}

#' @export
plot.kerasmesh_cost_traffic <- function(x, ...) {
  abort_no_picture(x, "Plot the cost it summarises ({.code plot(cost)}).")
}

#' @export
plot.kerasmesh_layout_plan_summary <- function(x, ...) {
  abort_no_picture(x, "Plot the plan it summarises ({.code plot(plan)}).")
}

#' @export
plot.kerasmesh_checkpoint_info <- function(x, ...) {
  abort_no_picture(x, "Print it, or read its steps ({.code x$steps}).")
}

#' @export
plot.kerasmesh_launch <- function(x, ...) {
  abort_no_picture(x, "Print it, or make a data frame of its workers with
                       {.code as.data.frame(x)}.")
}

#' @export
plot.kerasmesh_layout_fix <- function(x, ...) {
  abort_no_picture(x, "Print it: it is R code to run.")
}

# Meshes, layout maps and distributions are not lists: their fields
# describe one Python object. Base functions that would take them for
# lists are refused, with the way to what was meant.
abort_not_a_list <- function(x, what, way_out, call = rlang::caller_env()) {
  kerasmesh_abort(
    c("A {.cls {class(x)[[1]]}} can't be {what}.", i = way_out),
    kind = kinds$argument, call = call
  )
}

#' @export
c.kerasmesh_object <- function(...) {
  abort_not_a_list(..1, "combined with c()",
                   "Keep several in a list ({.code list(a, b)}); add rules to
                    a layout map with {.code lm[keys] <- layouts}.")
}

# A layout map has its own `[` and as.data.frame() (its rules).
#' @export
`[.kerasmesh_object` <- function(x, ...) {
  abort_not_a_list(x, "subset with `[`",
                   "Read its fields with {.code $} (such as
                    {.code mesh$shape}), or use {.fn mesh_shape},
                    {.fn mesh_devices}.")
}

#' @export
as.data.frame.kerasmesh_object <- function(x, ...) {
  abort_not_a_list(x, "made a data frame",
                   "Read what it describes: {.fn mesh_devices},
                    {.fn mesh_shape}, a layout map's rules.")
}

#' @export
`length<-.kerasmesh_object` <- function(x, value) {
  abort_not_a_list(x, "given a length",
                   "Add or remove a layout map's rules with {.code [[<-}.")
}

#' @export
Ops.kerasmesh_object <- function(e1, e2) {
  x <- if (inherits(e1, "kerasmesh_object")) e1 else e2
  operator <- .Generic # nolint: object_usage_linter. Set by dispatch.
  abort_not_a_list(x, paste("an operand of", operator),
                   "Compare what they describe: {.fn mesh_shape},
                    {.fn mesh_devices}, a layout map's {.fn as.list}.",
                   call = sys.call())
}

# sort(), order() and rank() ask xtfrm() for keys to sort by.
#' @export
#' @rawNamespace
#'   S3method(xtfrm, kerasmesh_layout_cost, xtfrm.kerasmesh_object)
#'   S3method(xtfrm, kerasmesh_device_topology, xtfrm.kerasmesh_object)
#'   S3method(xtfrm, kerasmesh_checkpoint_info, xtfrm.kerasmesh_object)
#'   S3method(xtfrm, kerasmesh_layout_search, xtfrm.kerasmesh_object)
#'   S3method(xtfrm, kerasmesh_sharding_picture, xtfrm.kerasmesh_object)
#'   S3method(xtfrm, kerasmesh_layout_plan_summary, xtfrm.kerasmesh_object)
#'   S3method(xtfrm, kerasmesh_launch, xtfrm.kerasmesh_object)
#'   S3method(xtfrm, kerasmesh_layout_plan, xtfrm_frame)
#'   S3method(xtfrm, kerasmesh_layout_comparison, xtfrm_frame)
#'   S3method(xtfrm, kerasmesh_sharding, xtfrm_frame)
#'   S3method(xtfrm, kerasmesh_cost_traffic, xtfrm_frame)
xtfrm.kerasmesh_object <- function(x) {
  abort_not_a_list(x, "sorted or ordered",
                   "Sort what it describes, read with {.code $}.")
}

# A plan, a comparison, a report or a summary of traffic: its rows are
# sorted by a column.
xtfrm_frame <- function(x) {
  abort_not_a_list(x, "sorted or ordered as a whole",
                   "Sort its rows by a column:
                    {.code x[order(x[[name]]), ]}.")
}

# unique() of an object would be a list of its fields.
#' @export
#' @rawNamespace
#'   S3method(unique, kerasmesh_layout_cost, unique.kerasmesh_object)
#'   S3method(unique, kerasmesh_device_topology, unique.kerasmesh_object)
#'   S3method(unique, kerasmesh_checkpoint_info, unique.kerasmesh_object)
#'   S3method(unique, kerasmesh_layout_search, unique.kerasmesh_object)
#'   S3method(unique, kerasmesh_sharding_picture, unique.kerasmesh_object)
#'   S3method(unique, kerasmesh_layout_plan_summary, unique.kerasmesh_object)
#'   S3method(unique, kerasmesh_launch, unique.kerasmesh_object)
unique.kerasmesh_object <- function(x, incomparables = FALSE, ...) {
  abort_not_a_list(x, "made unique", "It is one object: keep it as it is.")
}

# Costs, topologies, searches, pictures, checkpoint information, plan
# summaries and launches are lists of fields, one object each; operators
# are refused on them and on the data frames (compare their columns).
#' @rawNamespace
#'   S3method(c, kerasmesh_layout_cost, c_record)
#'   S3method(c, kerasmesh_device_topology, c_record)
#'   S3method(c, kerasmesh_checkpoint_info, c_record)
#'   S3method(c, kerasmesh_layout_search, c_record)
#'   S3method(c, kerasmesh_sharding_picture, c_record)
#'   S3method(c, kerasmesh_layout_plan_summary, c_record)
#'   S3method(c, kerasmesh_launch, c_record)
c_record <- function(...) {
  abort_not_a_list(..1, "combined with c()",
                   "Keep several in a list ({.code list(a, b)}).")
}

#' @rawNamespace
#'   S3method(as.data.frame, kerasmesh_layout_cost, as_frame_record)
#'   S3method(as.data.frame, kerasmesh_device_topology, as_frame_record)
#'   S3method(as.data.frame, kerasmesh_checkpoint_info, as_frame_record)
#'   S3method(as.data.frame, kerasmesh_layout_search, as_frame_record)
#'   S3method(as.data.frame, kerasmesh_sharding_picture, as_frame_record)
#'   S3method(as.data.frame, kerasmesh_layout_plan_summary, as_frame_record)
as_frame_record <- function(x, ...) {
  abort_not_a_list(x, "made a data frame",
                   "Read its parts with {.code $}; {.code names(x)} lists
                    them.")
}

#' @rawNamespace
#'   S3method(Ops, kerasmesh_layout_cost, ops_record)
#'   S3method(Ops, kerasmesh_device_topology, ops_record)
#'   S3method(Ops, kerasmesh_checkpoint_info, ops_record)
#'   S3method(Ops, kerasmesh_layout_search, ops_record)
#'   S3method(Ops, kerasmesh_sharding_picture, ops_record)
#'   S3method(Ops, kerasmesh_layout_plan_summary, ops_record)
#'   S3method(Ops, kerasmesh_launch, ops_record)
#'   S3method(Ops, kerasmesh_layout_plan, ops_record)
#'   S3method(Ops, kerasmesh_layout_comparison, ops_record)
#'   S3method(Ops, kerasmesh_sharding, ops_record)
#'   S3method(Ops, kerasmesh_cost_traffic, ops_record)
ops_record <- function(e1, e2) {
  x <- if (is.list(e1) && !is.null(attr(e1, "kerasmesh_fields"))) e1 else e2
  operator <- .Generic # nolint: object_usage_linter. Set by dispatch.
  abort_not_a_list(x, paste("an operand of", operator),
                   "Compare the parts you mean, read with {.code $}
                    ({.code a$memory == b$memory}).",
                   call = sys.call())
}
