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
book_builder <- function() {
  keras <- keras()
  function() {
    keras$Sequential(list(
      keras$Input(shape = list(16000L)),
      keras$layers$Dense(64000L, activation = "relu", name = "dense"),
      keras$layers$Dense(8000L, activation = "sigmoid", name = "dense_1")
    ), name = "sequential")
  }
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
