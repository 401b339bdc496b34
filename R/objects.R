# Methods every kerasmesh object shares where it has none of its own:
# str() and summary() of its fields, a plot() that says which picture
# there is, and c(), `[`, `length<-`, as.data.frame() and operators
# refused on meshes and distributions (layout maps have their own `[`
# and as.data.frame()).

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
