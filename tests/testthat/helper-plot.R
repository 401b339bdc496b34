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
