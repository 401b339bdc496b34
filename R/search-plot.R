# The picture of a search_layout() result: every configuration predicted,
# memory against traffic, with the budget and the found, start and
# data-parallel layouts marked. Drawn with the toolkit in utils-plot.R.

#' @rdname search_layout
#' @param x A `kerasmesh_layout_search`.
#' @param main The picture's title.
#' @export
plot.kerasmesh_layout_search <- function(x, ..., main = NULL) {
  check_dots_none()
  check_title(main)
  check_search_object(x)
  check_unedited(x)
  with_edits_named(x, {
    gb <- 1e9
    points <- search_points(x)
    budget <- x$budget
    if (!is.null(budget) && !is.finite(budget)) budget <- NULL
    xs <- search_scale(c(x$candidates$memory, points$memory, budget) / gb)
    ys <- search_scale(c(x$candidates$traffic, points$traffic) / gb)
    plot_page(
      main %||% "Configurations predicted",
      sprintf("%s (%s); budget %s per device",
              count_text(nrow(x$candidates), "configuration"), x$method,
              if (is.null(budget)) "none" else bytes_text(budget))
    )
    grid::pushViewport(grid::plotViewport(c(3.5, 4, 0.5, 0.5)))
    grid::pushViewport(grid::viewport(xscale = xs, yscale = ys))
    grid::grid.rect(gp = grid::gpar(col = "grey70"))
    grid::grid.xaxis(gp = grid::gpar(fontsize = 8))
    grid::grid.yaxis(gp = grid::gpar(fontsize = 8))
    grid::grid.text("memory per device (GB)", y = grid::unit(-2.5, "lines"),
                    gp = grid::gpar(fontsize = 9))
    grid::grid.text("traffic per device per global batch (GB)", rot = 90,
                    x = grid::unit(-3, "lines"), gp = grid::gpar(fontsize = 9))
    if (!is.null(budget)) {
      grid::grid.lines(grid::unit(rep(budget / gb, 2), "native"),
                       grid::unit(c(0, 1), "npc"),
                       gp = grid::gpar(lty = 2, col = "grey30"))
      grid::grid.text("budget ", grid::unit(budget / gb, "native"),
                      grid::unit(1, "npc") - grid::unit(0.6, "lines"),
                      just = "right", gp = grid::gpar(fontsize = 8,
                                                      col = "grey30"))
    }
    grid::grid.points(x$candidates$memory / gb, x$candidates$traffic / gb,
                      pch = 1, size = grid::unit(0.5, "char"),
                      gp = grid::gpar(col = "grey45"))
    points <- search_labels(points)
    grid::grid.points(points$memory / gb, points$traffic / gb, pch = 19,
                      size = grid::unit(0.7, "char"),
                      gp = grid::gpar(col = points$col))
    grid::grid.text(points$label, grid::unit(points$memory / gb, "native"),
                    grid::unit(points$traffic / gb, "native") +
                      grid::unit(0.8, "lines"),
                    gp = grid::gpar(fontsize = 8, col = points$col))
    grid::popViewport(3)
    invisible(x)
  })
}

# An axis's range for these values, as dataViewport() pads it: the finite
# ones, widened when they are all one value (one layout costed, or no
# traffic at all), where dataViewport() has no range to draw.
search_scale <- function(v) {
  v <- v[is.finite(v)]
  if (!length(v)) v <- 0
  r <- range(v)
  if (diff(r) == 0) {
    r <- if (r[1] == 0) c(0, 1) else r + c(-1, 1) * abs(r[1]) / 2
  }
  r + c(-1, 1) * 0.05 * diff(r)
}

# One label per place: layouts drawn on one point (the found layout is
# data parallel, say) are named together, "found = data parallel".
search_labels <- function(points) {
  at <- paste(points$memory, points$traffic)
  label <- tapply(points$label, factor(at, unique(at)), paste,
                  collapse = " = ")
  points <- points[!duplicated(at), , drop = FALSE]
  points$label <- unname(label[unique(at)])
  points
}

# The marked layouts: found (verified), start and data parallel (the
# search's own figures), those the search has.
search_points <- function(x) {
  marks <- list(
    found = c(search_found(x), col = "red3"),
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
