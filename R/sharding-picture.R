#' Picture which device holds which shard of a variable
#'
#' Works out how a variable (or any tensor) is cut into shards on a device
#' mesh, and which devices hold each shard, then draws it: as a box grid in
#' the console (`print()`) or as a figure (`plot()`). The shards come from
#' JAX itself (`NamedSharding.devices_indices_map()`), computed from the
#' mesh, the layout and the shape alone: nothing is allocated, so a planned
#' 16000 x 64000 kernel draws as fast as a placed 32 x 64 one.
#'
#' @section Drawing:
#' The tensor is drawn as a rectangle cut into its shards, in proportion to
#' its dimensions (with the aspect ratio kept between 1:5 and 5:1 so thin
#' tensors stay readable). Each shard is labelled with every device that
#' holds it: replicas are listed together. The last two dimensions form the
#' grid, rows then columns; a 1-D tensor is one row of shards. Each shard
#' along the leading dimensions of a 3-D or 4-D (or higher) tensor becomes
#' a panel of its own, headed by its R index, such as `[1:4, , ]`; leading
#' dimensions that are not split give a single panel. Index ranges are R's:
#' 1-based and inclusive, so `17:32` is what `x[, 17:32]` would take.
#'
#' In the console the grid uses box-drawing characters when
#' [cli::is_utf8_output()] is true and `+`, `-` and `|` otherwise, and
#' splits wide grids into bands of columns that fit `width`.
#'
#' @param x What to picture:
#'   * a Keras model, with `path`: the placed variable, read from its JAX
#'     array's own sharding;
#'   * a [variable_sharding()] report, with `path`;
#'   * a [layout_plan()], with `path`: the planned layout, nothing
#'     allocated;
#'   * a [layout_map()], with `path` and `shape`: the rule that `path`
#'     matches (no rule: replicated);
#'   * a [device_mesh()], with `axes` and `shape`;
#'   * a data frame a report or a plan became (`as.data.frame()`,
#'     `rbind()`), with `path` and `mesh`.
#' @param path A variable path such as `"sequential/dense/kernel"`, or a
#'   unique ending of one after a `/` (`"dense/kernel"`). May be omitted
#'   when a model, report or plan has a single variable. For a mesh, only a
#'   label for the picture.
#' @param shape The tensor's shape: whole numbers, or a keras3 `shape()`.
#' @param axes The layout: for each dimension the mesh axis it is split
#'   over, `NA` when not split, in any form [layout_map()] takes (such as
#'   `c(NA, "model")` or `tuple(NULL, "model")`), and checked the same way.
#'   Shorter layouts are padded with `NA`, as Keras pads them.
#' @param dtype The data type, for the byte counts: its size as NumPy
#'   stores it, so a 4-bit type (`"int4"`) counts one byte per element, as
#'   on the CPU; XLA may pack two to a byte on a GPU or TPU.
#' @param mesh For a [variable_sharding()] report: the mesh its variables
#'   are placed on. The report records it (attribute `"mesh"`); pass it for
#'   a data frame, which does not. A mesh on which the variable's axes give
#'   other shards than the report's is an error
#'   (`kerasmesh_error_mesh_mismatch`).
#' @param ... Must be empty: a misspelt argument is an error.
#' @return A `kerasmesh_sharding_picture`: a list with `path`, `source`
#'   (`"placed"` or `"planned"`), `shape`, `dtype`, `axes`, `shard_shape`,
#'   `copies`, `bytes`, `device_bytes`, `start` and `stop` (matrices with a
#'   row per shard and a column per dimension: 0-based starts and exclusive
#'   stops, as in Python), `devices` (a list: the devices holding each
#'   shard) and `mesh`. `format()` gives the console rendering, `print()`
#'   writes it and `plot()` draws the figure; both return `x` invisibly.
#' @seealso [plot.kerasmesh_device_mesh()] for the mesh itself,
#'   [plot.kerasmesh_layout_plan()] for memory per device.
#' @order 1
#' @export
#' @examplesIf keras_available()
#' simulate_devices(8)
#' mesh <- device_mesh(c(data = 2, model = 4))
#' # The book's kernel, never allocated: 4 column shards, each on 2 devices.
#' kernel <- sharding_picture(mesh, axes = c(NA, "model"),
#'                            shape = c(16000, 64000))
#' kernel
#' plot(kernel)
#' # A 3-D variable: one panel per shard of the first dimension.
#' sharding_picture(mesh, axes = c("data", NA, "model"), shape = c(4, 8, 32))
#' lm <- layout_map(mesh, ".*kernel" = c(NA, "model"))
#' sharding_picture(lm, "sequential/dense/kernel", shape = c(32, 64))
sharding_picture <- function(x, ...) {
  check_required()
  UseMethod("sharding_picture")
}

#' @rdname sharding_picture
#' @export
sharding_picture.default <- function(x, path = NULL, ...) {
  check_dots_none()
  if (!inherits(x, "python.builtin.object")) {
    stop_input_type(x, "a Keras model, a sharding report, a layout plan,
         a layout map or a device mesh", show_value = FALSE)
  }
  if (!is.null(path)) check_string(path)
  new_sharding_picture(shim_call("shards.variable_shards", model = x,
                                 path = path))
}

#' @rdname sharding_picture
#' @export
sharding_picture.kerasmesh_device_mesh <- function(x, axes, shape,
                                                   dtype = "float32", ...,
                                                   path = NULL) {
  check_dots_none()
  check_supplied(c(axes = missing(axes), shape = missing(shape)))
  check_unedited(x)
  if (!is.null(path)) check_string(path)
  mesh_picture(x, axes, shape, dtype, path, arg = "x")
}

#' @rdname sharding_picture
#' @export
sharding_picture.kerasmesh_layout_map <- function(x, path, shape,
                                                  dtype = "float32", ...) {
  check_dots_none()
  check_supplied(c(path = missing(path), shape = missing(shape)))
  axes <- x[[check_string(path)]]
  shape <- check_tensor_shape(shape)
  sharding_picture(.subset2(x, "mesh"),
                   axes = axes %||% rep(NA_character_, length(shape)),
                   shape = unlist(shape), dtype = dtype, path = path)
}

#' @rdname sharding_picture
#' @export
sharding_picture.kerasmesh_layout_plan <- function(x, path = NULL, ...) {
  check_dots_none()
  check_plan_object(x)
  check_unedited(x)
  row <- picture_row(x, path)
  sharding_picture(attr(x, "mesh"), axes = x$axes[[row]],
                   shape = x$shape[[row]], dtype = x$dtype[[row]],
                   path = x$path[[row]])
}

#' @rdname sharding_picture
#' @export
sharding_picture.kerasmesh_sharding <- function(x, path = NULL, ...,
                                                mesh = attr(x, "mesh")) {
  check_dots_none()
  check_unedited(x)
  row <- picture_row(x, path)
  if (is.null(mesh)) {
    kerasmesh_abort(
      c("Can't picture {.val {x$path[[row]]}} without its mesh.",
        x = "This sharding report does not record the mesh.",
        i = "Pass {.arg mesh}, or picture the model itself:
             {.code sharding_picture(model, path)}."),
      kind = kinds$device_mesh
    )
  }
  report_picture(x, row, mesh, source = "placed",
                 mesh_arg = if (missing(mesh)) "x" else "mesh")
}

# A data frame a sharding report or a plan became (`as.data.frame()`,
# `rbind()`): its rows, pictured on the `mesh` they were placed on.
#' @rdname sharding_picture
#' @export
sharding_picture.data.frame <- function(x, path = NULL, ..., mesh) {
  check_dots_none()
  check_supplied(c(mesh = missing(mesh)))
  ok <- c(path = is.character(x$path), axes = is.list(x$axes),
          shape = is.list(x$shape), dtype = is.character(x$dtype))
  check_fields(x, ok, "a column of a sharding report or a layout plan",
               way_out = "Picture the report itself, or a tensor on a mesh:
                          {.code sharding_picture(mesh, axes = , shape = )}.")
  source <- if (is.null(x$spec)) "planned" else "placed"
  report_picture(x, picture_row(x, path), mesh, source)
}

# Row `row` of a report's (or a plan's) columns on `mesh`. JAX may have
# placed an array over several axes on one dimension ("data+model"), which
# a layout can't ask for but a picture can show. A mesh on which the row's
# axes give other shards than the report's is not the mesh it was placed
# on.
report_picture <- function(x, row, mesh, source, mesh_arg = "mesh",
                           call = rlang::caller_env()) {
  picture <- mesh_picture(as_device_mesh(mesh, call = call), x$axes[[row]],
                          x$shape[[row]], x$dtype[[row]], x$path[[row]],
                          several = TRUE, arg = mesh_arg, call = call)
  placed <- x$shard_shape[[row]]
  if (!is.null(placed) && !identical(as.numeric(unlist(placed)),
                                     as.numeric(picture$shard_shape))) {
    kerasmesh_abort(
      c("{.arg mesh} must be the mesh {.val {x$path[[row]]}} was placed on.",
        x = "On it, shards would be {format_dims(picture$shard_shape)};
             the report has {format_dims(unlist(placed))}."),
      kind = kinds$mesh_mismatch, call = call
    )
  }
  picture$source <- source
  stamp_fields(picture)
}

# -- building the picture -----------------------------------------------------

# `arg`: what the user passed that holds the mesh.
mesh_picture <- function(mesh, axes, shape, dtype, path, several = FALSE,
                         arg = "mesh", call = rlang::caller_env()) {
  # R checks first: shim_call() starts Python.
  axes <- axes_for_shim(axes, arg = "axes", call = call)
  shape <- check_tensor_shape(shape, call = call)
  dtype <- check_string(dtype, call = call)
  new_sharding_picture(shim_call(
    "shards.tensor_shards", mesh = object_py(mesh, arg, call), axes = axes,
    shape = shape, dtype = dtype,
    path = path, several = several, call = call
  ))
}

new_sharding_picture <- function(desc) {
  shape <- whole_numbers(desc$shape)
  rank <- length(shape)
  shards <- desc$shards
  as_matrix <- function(rows) {
    matrix(as.numeric(unlist(rows)), nrow = length(rows), ncol = rank,
           byrow = TRUE)
  }
  stamp_fields(structure(
    list(
      path = desc$path %||% NA_character_,
      source = desc$source,
      shape = shape,
      dtype = desc$dtype,
      axes = axes_from_python(desc$axes),
      shard_shape = whole_numbers(desc$shard_shape),
      copies = as.integer(desc$copies),
      bytes = as.numeric(desc$bytes),
      device_bytes = as.numeric(desc$device_bytes),
      start = as_matrix(shards$start),
      stop = as_matrix(shards$stop),
      devices = lapply(shards$devices, function(d) as.character(unlist(d))),
      mesh = if (!is.null(desc$mesh)) new_device_mesh(desc$mesh)
    ),
    class = "kerasmesh_sharding_picture"
  ))
}

# The row of a report or plan that `path` names: exactly, or as the one
# path ending in "/<path>".
picture_row <- function(x, path, call = rlang::caller_env()) {
  paths <- x$path
  if (length(paths) == 0) {
    kerasmesh_abort(
      c("There is no variable to picture.",
        x = "The model has no variables.",
        i = "Picture a model with weights, or a tensor on a mesh:
             {.code sharding_picture(mesh, axes = , shape = )}."),
      kind = kinds$variable_path, call = call
    )
  }
  if (is.null(path)) {
    if (length(paths) == 1) {
      return(1L)
    }
    kerasmesh_abort(
      c("{.arg path} must name one of the {length(paths)} variables.",
        i = "Paths: {.val {utils::head(paths, 6)}}{if (length(paths) > 6)
             ', ...' else ''}."),
      kind = kinds$variable_path, call = call
    )
  }
  path <- check_string(path, call = call)
  row <- which(paths == path)
  if (length(row) == 0) {
    row <- which(endsWith(paths, paste0("/", path)))
  }
  if (length(row) == 1) {
    return(row)
  }
  candidates <- if (length(row) > 1) paths[row] else
    paths[agrepl(path, paths, max.distance = 0.2, fixed = TRUE)]
  kerasmesh_abort(
    c("{.arg path} must name one variable.",
      x = if (length(row) > 1) {
        "{length(row)} paths end with {.val {paste0('/', path)}}."
      } else {
        "No variable has path {.val {path}}."
      },
      i = if (length(candidates)) {
        "Did you mean {.or {.val {utils::head(candidates, 3)}}}?"
      }),
    kind = kinds$variable_path, call = call
  )
}

check_tensor_shape <- function(shape, call = rlang::caller_env()) {
  if (inherits(shape, "keras_shape")) {
    shape <- unlist(lapply(unclass(shape), function(s) s %||% NA))
  }
  # A dimension of 0 has no shards to draw.
  if (!is.numeric(shape) || anyNA(shape) || any(!is.finite(shape)) ||
      any(shape < 1) || any(shape != round(shape))) {
    stop_input_type(shape, "positive whole numbers, one per dimension",
                    kind = kinds$shape, call = call)
  }
  as.list(as.numeric(shape))
}
