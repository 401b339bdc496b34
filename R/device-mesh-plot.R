# Drawing a device mesh: tiles labelled with device names, one panel per
# index of the axes after the second.

#' Draw a device mesh
#'
#' Draws the mesh's devices as a grid of tiles, each labelled with its
#' device name: rows along the first axis and columns along the second,
#' each axis labelled with its name, size and indices. A 1-D mesh is one
#' row; a mesh of 3 or more axes is drawn as panels, one for each index of
#' the axes after the second (`"stage = 0"`). Tiles are shaded by their
#' column, so the devices that share an index along the second axis share a
#' shade; the shades differ in lightness, so they stay apart in greyscale.
#' Drawn with \pkg{grid}.
#'
#' @param x A [device_mesh()].
#' @param ... Not used.
#' @param main A title; `NULL` for `"Device mesh"`.
#' @return `x`, invisibly.
#' @seealso [sharding_picture()] for the shards of one variable on the
#'   mesh, [plot.kerasmesh_layout_plan()] for memory per device.
#' @export
#' @examplesIf keras_available()
#' simulate_devices(8)
#' plot(device_mesh(c(data = 2, model = 4)))
#' plot(device_mesh(c(stage = 2, data = 2, model = 2)))
plot.kerasmesh_device_mesh <- function(x, ..., main = NULL) {
  check_dots_none()
  check_title(main)
  check_unedited(x)
  with_edits_named(x, {
    draw_mesh(x, main = main %||% "Device mesh")
    invisible(x)
  })
}

draw_mesh <- function(mesh, main) {
  devices <- mesh_devices(mesh)
  shape <- mesh_shape(mesh)
  axes <- names(shape)
  rank <- length(shape)
  panels <- mesh_panels(devices)
  plot_page(main, mesh_summary(mesh))
  fills <- seq_fills(if (rank == 1) shape[[1]] else shape[[2]])
  draw_panels(length(panels), function(p) {
    panel <- panels[[p]]
    cells <- panel$devices
    labels <- matrix(lapply(cells, identity), nrow(cells))
    col_fill <- fills[col(cells)]
    draw_labelled_grid(
      labels = labels, fills = matrix(col_fill, nrow(cells)),
      col_sizes = rep(1, ncol(cells)), row_sizes = rep(1, nrow(cells)),
      col_labels = as.character(seq_len(ncol(cells)) - 1L),
      row_labels = if (rank >= 2) as.character(seq_len(nrow(cells)) - 1L),
      col_title = sprintf("%s (%d)", axes[[min(2, rank)]],
                          shape[[min(2, rank)]]),
      row_title = if (rank >= 2) sprintf("%s (%d)", axes[[1]], shape[[1]]),
      heading = panel$label, aspect = nrow(cells) / ncol(cells)
    )
  })
  grid::popViewport(0)
}

# 2-D slices of a device array: one per index of the axes after the second.
mesh_panels <- function(devices) {
  shape <- dim(devices)
  axes <- names(dimnames(devices))
  if (length(shape) == 1) {
    return(list(list(label = NULL,
                     devices = matrix(as.vector(devices), nrow = 1))))
  }
  if (length(shape) == 2) {
    return(list(list(label = NULL, devices = unclass(devices))))
  }
  slices <- expand.grid(lapply(shape[-(1:2)], seq_len))
  lapply(seq_len(nrow(slices)), function(s) {
    index <- unlist(slices[s, ])
    slice <- do.call(`[`, c(list(devices, TRUE, TRUE), as.list(index),
                            drop = FALSE))
    list(
      label = paste(sprintf("%s = %d", axes[-(1:2)], index - 1L),
                    collapse = ", "),
      devices = matrix(slice, shape[1], shape[2])
    )
  })
}
