# Runs `expr` with a PNG device open, closing it afterwards, and returns the
# value of `expr` with its visibility, for expect_invisible().
with_png <- function(expr, width = 6, height = 4) {
  path <- tempfile(fileext = ".png")
  grDevices::png(path, width = width, height = height, units = "in",
                 res = 72)
  on.exit({
    grDevices::dev.off()
    unlink(path)
  })
  expr
}

# The book's 1.54-billion-parameter model, built shape-only by layout_plan().
book_builder <- function() two_dense_builder(16000, 64000, 8000, "sigmoid")

# plot(x) draws and gives back x invisibly, with a title or without.
expect_plot_returns <- function(x) {
  expect_invisible(with_png(plot(x)))
  expect_identical(with_png(plot(x, main = "A title")), x)
}

# A vdiffr snapshot of the picture `draw()` makes
# (tests/testthat/_snaps/<file>/<title>.svg). The SVGs are the same on
# Debian 12 (vdiffr 1.0.5, R 4.2) and Debian 13 (vdiffr 1.0.8, R 4.5): both
# write SVG engine 2.0 with vdiffr's own font metrics, so one set of
# snapshots serves both. vdiffr skips, not fails, a snapshot written by
# another SVG engine.
expect_picture <- function(title, draw) {
  testthat::skip_if_not_installed("vdiffr")
  vdiffr::expect_doppelganger(title, draw)
}

# expect_picture() for each named argument: its name the title, its value
# the object to plot.
expect_pictures <- function(...) {
  objects <- list(...)
  for (title in names(objects)) {
    expect_picture(title, function() plot(objects[[title]]))
  }
}
