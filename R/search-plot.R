# The picture of a search_layout() result: every layout costed, memory
# against traffic, with the budget and the found, start and data-parallel
# layouts marked. Drawn with the toolkit in utils-plot.R.

#' @rdname search_layout
#' @param x A `kerasmesh_layout_search`.
#' @param main The picture's title.
#' @export
plot.kerasmesh_layout_search <- function(x, ..., main = NULL) {
  gb <- 1e9
  points <- search_points(x)
  xs <- c(x$candidates$memory, points$memory, x$budget) / gb
  ys <- c(x$candidates$traffic, points$traffic) / gb
  plot_page(
    main %||% "Layouts costed",
    sprintf("%d layouts (%s); budget %s per device", nrow(x$candidates),
            x$method, if (is.null(x$budget)) "none" else
              bytes_text(x$budget))
  )
  grid::pushViewport(grid::plotViewport(c(3.5, 4, 0.5, 0.5)))
  grid::pushViewport(grid::dataViewport(xs, ys))
  grid::grid.rect(gp = grid::gpar(col = "grey70"))
  grid::grid.xaxis(gp = grid::gpar(fontsize = 8))
  grid::grid.yaxis(gp = grid::gpar(fontsize = 8))
  grid::grid.text("memory per device (GB)", y = grid::unit(-2.5, "lines"),
                  gp = grid::gpar(fontsize = 9))
  grid::grid.text("traffic per device per step (GB)", rot = 90,
                  x = grid::unit(-3, "lines"), gp = grid::gpar(fontsize = 9))
  if (!is.null(x$budget)) {
    grid::grid.lines(grid::unit(rep(x$budget / gb, 2), "native"),
                     grid::unit(c(0, 1), "npc"),
                     gp = grid::gpar(lty = 2, col = "grey30"))
    grid::grid.text("budget ", grid::unit(x$budget / gb, "native"),
                    grid::unit(1, "npc") - grid::unit(0.6, "lines"),
                    just = "right", gp = grid::gpar(fontsize = 8,
                                                    col = "grey30"))
  }
  grid::grid.points(x$candidates$memory / gb, x$candidates$traffic / gb,
                    pch = 1, size = grid::unit(0.5, "char"),
                    gp = grid::gpar(col = "grey45"))
  grid::grid.points(points$memory / gb, points$traffic / gb, pch = 19,
                    size = grid::unit(0.7, "char"),
                    gp = grid::gpar(col = points$col))
  grid::grid.text(points$label, grid::unit(points$memory / gb, "native"),
                  grid::unit(points$traffic / gb, "native") +
                    grid::unit(0.8, "lines"),
                  gp = grid::gpar(fontsize = 8, col = points$col))
  grid::popViewport(3)
  invisible(x)
}

# The marked layouts: found (verified), start and data parallel (the
# search's own figures), those the search has.
search_points <- function(x) {
  marks <- list(
    found = list(memory = x$cost$xla[["total"]],
                 traffic = sum(x$cost$collectives$bytes), col = "red3"),
    start = if (!is.null(x$start)) c(x$start, col = "steelblue4"),
    "data parallel" = if (!is.null(x$data_parallel)) {
      c(x$data_parallel, col = "grey20")
    }
  )
  marks <- Filter(Negate(is.null), marks)
  data.frame(label = names(marks),
             memory = vapply(marks, function(m) m$memory, 1),
             traffic = vapply(marks, function(m) m$traffic, 1),
             col = vapply(marks, function(m) m$col, ""),
             stringsAsFactors = FALSE)
}
