# Methods every object that stands for a Python object shares: meshes,
# layout maps and distributions (class `kerasmesh_object`).

# str() and summary() read an object's fields by position, which `[[` of a
# layout map takes for rule paths: these objects show their fields as
# lists.
#' @rawNamespace S3method(utils::str, kerasmesh_object)
str.kerasmesh_object <- function(object, ...) {
  utils::str(unclass(object), ...)
}

#' @export
summary.kerasmesh_object <- function(object, ...) {
  check_unedited(object, prefix = "object")
  summary(unclass(object), ...)
}

# A mesh draws itself (plot.kerasmesh_device_mesh()); a layout map or a
# distribution has no picture of its own: the error says which has.
#' @export
plot.kerasmesh_object <- function(x, ...) {
  kerasmesh_abort(
    c("A {.cls {class(x)[[1]]}} has no picture of its own.",
      i = "Plot its mesh ({.code plot(x$mesh)}), or one variable's shards
           with {.fn sharding_picture}."),
    kind = kinds$argument
  )
}
