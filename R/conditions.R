#' Conditions kerasmesh signals
#'
#' Every error kerasmesh signals has class `kerasmesh_error` and every
#' warning `kerasmesh_warning`, plus one class naming the problem,
#' `kerasmesh_error_<kind>` or `kerasmesh_warning_<kind>`. Catch the one you
#' can handle, for example with
#' `tryCatch(code, kerasmesh_error_mesh_shape = function(e) ...)`.
#' Errors that come from Python keep the Python type, message and traceback
#' in the fields `python_type`, `python_message` and `python_traceback`.
#'
#' @name kerasmesh_conditions
#' @seealso [with_kerasmesh_errors()] for Python errors from Keras methods
#'   called directly.
#' @examplesIf keras_available()
#' simulate_devices(8)
#' tryCatch(
#'   device_mesh(c(data = 3)),
#'   kerasmesh_error_mesh_shape = function(e) class(e)
#' )
NULL

# The registry of kinds (generated into kinds.R): `kinds$<name>` is the
# kind's name, and an unknown name is an internal error rather than NULL,
# so a typo fails where it is written.
new_kinds <- function(names) {
  all <- sort(unique(unlist(names, use.names = FALSE)))
  structure(as.list(stats::setNames(all, all)), class = "kerasmesh_kinds")
}

#' @export
`$.kerasmesh_kinds` <- function(x, name) {
  kind <- .subset2(x, name)
  if (is.null(kind)) {
    cli::cli_abort("{.val {name}} is not a condition kind.", .internal = TRUE)
  }
  kind
}

# `kind`, if each of its elements is a kind of `severity` ("errors" or
# "warnings"); anything else is an internal error: a kind is a bug when
# it is raised, not when a test scans for it.
check_kind <- function(kind, severity = "errors") {
  known <- kind_names[[severity]]
  if (!is.character(kind) || length(kind) == 0 || !all(kind %in% known)) {
    cli::cli_abort(
      "{.val {kind}} must be {sub('s$', '', severity)} kind{?s}.",
      .internal = TRUE
    )
  }
  kind
}

# The classes of a condition of `kind` (one kind, or several, most
# specific first): c("kerasmesh_error_<kind>", ..., "kerasmesh_error").
error_classes <- function(kind) {
  condition_classes(kind, "errors")
}

warning_classes <- function(kind) {
  condition_classes(kind, "warnings")
}

condition_classes <- function(kind, severity) {
  umbrella <- paste0("kerasmesh_", sub("s$", "", severity))
  c(paste0(umbrella, "_", check_kind(kind, severity)), umbrella)
}
