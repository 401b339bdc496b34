# Drawing a sharding picture: the shards of one variable on the mesh.

#' @rdname sharding_picture
#' @param main A title; `NULL` for the variable's path and shape.
#' @export
plot.kerasmesh_sharding_picture <- function(x, ..., main = NULL) {
  check_dots_none()
  check_title(main)
  check_unedited(x)
  with_edits_named(x, {
    draw_sharding_picture(x, main = main)
    invisible(x)
  })
}

#' @rdname sharding_picture
#' @export
plot.kerasmesh_sharding <- function(x, path = NULL, ...,
                                    mesh = attr(x, "mesh")) {
  check_dots_none()
  check_unedited(x)
  with_edits_named(x, {
    plot(sharding_picture(x, path = path, mesh = mesh), ...)
    invisible(x)
  })
}

draw_sharding_picture <- function(x, main = NULL) {
  layout <- picture_layout(x)
  rank <- length(x$shape)
  subtitle <- c(picture_header(x, Inf)[-1],
                if (rank > 2) sub(";.*", "", picture_roles(x)))
  dim_title <- function(d) {
    size <- format_count(x$shape[[d]])
    c(sprintf("dimension %d (%s)", d, size), sprintf("dim %d (%s)", d, size),
      sprintf("dim %d", d))
  }
  plot_page(main %||% picture_title(x), subtitle)
  fills <- seq_fills(length(x$devices))
  panels <- layout$panels
  aspect <- function(panel) {
    ratio <- if (rank == 0) {
      1
    } else if (rank == 1) {
      0.2
    } else {
      sum(panel$row_sizes) / sum(panel$col_sizes)
    }
    min(max(ratio, 0.2), 5)
  }
  draw_panels(length(panels), function(p) {
    panel <- panels[[p]]
    cells <- panel$cells
    labels <- matrix(lapply(cells, function(i) {
      if (is.na(i)) character() else x$devices[[i]]
    }), nrow(cells))
    draw_labelled_grid(
      labels = labels, fills = matrix(fills[cells], nrow(cells)),
      col_sizes = panel$col_sizes, row_sizes = panel$row_sizes,
      col_labels = panel$col_labels,
      row_labels = if (rank >= 2) panel$row_labels,
      col_title = if (rank >= 1) dim_title(rank),
      row_title = if (rank >= 2) dim_title(rank - 1),
      heading = panel$label, aspect = aspect(panel)
    )
  }, ncol = picture_columns(length(panels), aspect(panels[[1]])))
  grid::popViewport(0)
}
