#' Create a device mesh
#'
#' A device mesh arranges devices in a grid whose axes have names, such as
#' `"data"` for data parallelism and `"model"` for model parallelism.
#' `device_mesh()` checks everything Keras would accept and fail on later
#' (sizes, the device count, axis names, unknown or repeated devices), then
#' builds a `keras.distribution.DeviceMesh`.
#'
#' @param shape Sizes of the mesh's axes: a numeric vector (whole doubles
#'   are fine), a named vector such as `c(data = 2, model = 4)` whose names
#'   become the axis names, or a keras3 `shape()`. One size may be `NA` (or
#'   `-1`); it is inferred from the number of devices.
#' @param axis_names One unique, non-empty name per axis, in printable ASCII
#'   without a backslash (XLA crashes reading others back).
#' @param devices `NULL` for all devices of the default type, a count `n`
#'   for the first `n` devices, or a character vector of device names as
#'   [list_devices()] gives them.
#' @param ... Must be empty.
#' @return A `kerasmesh_device_mesh` object. `r_to_py()` (reticulate's) gives
#'   the Keras `DeviceMesh`, so the object can be passed to any
#'   `keras$distribution` function.
#' @seealso [mesh_shape()], [mesh_axis_names()] and [mesh_devices()] to read
#'   a mesh; [layout_map()] to give variables layouts on it.
#' @export
#' @examplesIf keras_available()
#' simulate_devices(8)
#' mesh <- device_mesh(c(data = 2, model = 4))
#' mesh
#' mesh_devices(mesh)
#' device_mesh(c(2, NA), axis_names = c("data", "model"))
device_mesh <- function(shape, axis_names = names(shape), devices = NULL, ...) {
  check_call()
  force(axis_names)
  named <- if (is.atomic(shape)) names(shape) # nolint: object_usage_linter.
  if (!missing(axis_names) && !is.null(named) &&
      !identical(unname(axis_names), named)) {
    kerasmesh_abort(
      c("The axis names must be given once: in {.arg shape} or in
         {.arg axis_names}.",
        x = "{.arg shape} names {.val {named}}; {.arg axis_names} is
             {.val {axis_names}}."),
      kind = kinds$axis_names
    )
  }
  shape <- check_mesh_shape(shape)
  if (!is.null(axis_names)) {
    if (!is.character(axis_names)) {
      stop_input_type(axis_names, "a character vector", show_value = FALSE,
                      kind = kinds$axis_names)
    }
    axis_names <- na_to_null(axis_names)
  }
  devices <- check_devices(devices)
  new_device_mesh(shim_call("mesh.device_mesh", shape = shape,
                            axis_names = axis_names, devices = devices))
}

#' Read a device mesh
#'
#' @param mesh A [device_mesh()].
#' @return `mesh_shape()`: the sizes, an integer vector named by axis.
#'   `mesh_axis_names()`: the axis names. `mesh_devices()`: the device names
#'   as an array of the mesh's shape, its dimnames named by axis.
#' @export
#' @examplesIf keras_available()
#' simulate_devices(8)
#' mesh <- device_mesh(c(data = 2, model = 4))
#' mesh_shape(mesh)
#' mesh_axis_names(mesh)
#' mesh_devices(mesh)["1", ]
mesh_shape <- function(mesh, ...) {
  check_call()
  .subset2(as_device_mesh(mesh), "shape")
}

#' @param ... Must be empty.
#' @rdname mesh_shape
#' @export
mesh_axis_names <- function(mesh, ...) {
  check_call()
  names(.subset2(as_device_mesh(mesh), "shape"))
}

#' @rdname mesh_shape
#' @export
mesh_devices <- function(mesh, ...) {
  check_call()
  .subset2(as_device_mesh(mesh), "devices")
}

#' @export
format.kerasmesh_device_mesh <- function(x, ...) {
  check_dots_none()
  check_unedited(x)
  with_edits_named(x, {
    c(mesh_header(x), format_device_grid(.subset2(x, "devices")))
  })
}

#' @export
print.kerasmesh_device_mesh <- function(x, ...) {
  writeLines(format(x, ...))
  invisible(x)
}

# A kerasmesh mesh from one, or from a Keras DeviceMesh.
as_device_mesh <- function(x, arg = rlang::caller_arg(x),
                           call = rlang::caller_env()) {
  if (inherits(x, "kerasmesh_device_mesh")) {
    return(check_unedited(x, prefix = arg, call = call))
  }
  # One trip: the shim describes a Keras DeviceMesh and answers NULL for
  # any other Python object.
  if (inherits(x, "python.builtin.object")) {
    desc <- shim_call("mesh.describe_mesh", mesh = x, strict = FALSE,
                      call = call)
    if (!is.null(desc)) {
      return(new_device_mesh(desc))
    }
  }
  stop_input_type(x, "a device mesh", show_value = FALSE,
                  way_out = "Create one with {.fn device_mesh}.",
                  kind = kinds$device_mesh, arg = arg, call = call)
}

new_device_mesh <- function(desc) {
  axis_names <- as.character(unlist(desc$axis_names))
  shape <- stats::setNames(as.integer(unlist(desc$shape)), axis_names)
  stamp_fields(structure(
    list(
      py = desc$mesh,
      shape = shape,
      devices = device_array(as.character(unlist(desc$devices)), shape),
      device_type = desc$device_type
    ),
    class = c("kerasmesh_device_mesh", "kerasmesh_object")
  ))
}

# Python lists devices in row-major order; R arrays fill column-major.
device_array <- function(devices, shape) {
  rank <- length(shape)
  grid <- array(devices, dim = rev(shape))
  if (rank > 1) {
    grid <- aperm(grid, rev(seq_len(rank)))
  }
  dim(grid) <- unname(shape)
  dimnames(grid) <- stats::setNames(
    lapply(shape, function(n) as.character(seq_len(n) - 1L)),
    names(shape)
  )
  grid
}

mesh_summary <- function(mesh) {
  shape <- .subset2(mesh, "shape")
  x <- times_symbol()
  n <- prod(shape)
  sprintf(
    "%s (%s), %s",
    paste(shape, collapse = paste0(" ", x, " ")),
    paste(names(shape), collapse = paste0(" ", x, " ")),
    count_text(n, paste(.subset2(mesh, "device_type"), "device"))
  )
}

# "a 2 × 4 (data × model), 8 cpu devices", "an 8 (model), ...".
mesh_phrase <- function(mesh) {
  summary <- mesh_summary(mesh)
  paste(a_or_an(summary), summary)
}

mesh_header <- function(mesh) {
  paste("<kerasmesh_device_mesh>", mesh_summary(mesh))
}

check_mesh_shape <- function(shape, call = rlang::caller_env()) {
  if (inherits(shape, "keras_shape")) {
    shape <- lapply(unclass(shape), function(s) if (is.null(s)) NA else s)
    shape <- unlist(shape)
  }
  if (is.logical(shape) && length(shape) > 0 && all(is.na(shape))) {
    shape <- as.numeric(shape)
  }
  if (!is.numeric(shape) || length(shape) == 0) {
    stop_input_type(shape, "a non-empty numeric vector of sizes",
                    show_value = FALSE, kind = kinds$mesh_shape, call = call)
  }
  if (any(is.nan(shape))) {
    kerasmesh_abort(
      c("{.arg shape} must hold sizes, or `NA` for the one to infer.",
        x = "Dimension {which(is.nan(shape))[[1]]} is NaN."),
      kind = kinds$mesh_shape, call = call
    )
  }
  na_to_null(unname(shape))
}

check_devices <- function(devices, call = rlang::caller_env()) {
  if (is.null(devices)) {
    return(NULL)
  }
  if (is.numeric(devices) && length(devices) == 1) {
    return(devices)
  }
  if (is.character(devices) && anyNA(devices)) {
    # Positions as text: cli counts a vector's length, not its value.
    at <- as.character(which(is.na(devices))) # nolint: object_usage_linter.
    kerasmesh_abort(
      c("{.arg devices} must be device names or a single count.",
        x = "Element{?s} {at} {?is/are} NA."),
      kind = kinds$devices, call = call
    )
  }
  if (!is.character(devices) || length(devices) == 0) {
    stop_input_type(devices, "device names or a single count",
                    show_value = FALSE, kind = kinds$devices, call = call)
  }
  as.list(devices)
}
