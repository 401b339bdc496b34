# A plain Keras model whose blocks are repeated Sequential models: x +
# block(x), `blocks` times, each block Dense (gelu) "up_<i>" and Dense
# "down_<i>", then a Dense "head". Fixed names and weights.
residual_blocks_model <- function(blocks = 3L, width = 16L, hidden = 64L) {
  keras <- keras()
  keras$utils$set_random_seed(7L)
  inputs <- keras$Input(shape = list(width), name = "x")
  x <- inputs
  for (i in seq_len(blocks) - 1L) {
    block <- keras$Sequential(list(
      keras$layers$Dense(hidden, activation = "gelu",
                         name = paste0("up_", i)),
      keras$layers$Dense(width, name = paste0("down_", i))
    ), name = paste0("block_", i))
    x <- keras$layers$Add(name = paste0("add_", i))(list(x, block(x)))
  }
  outputs <- keras$layers$Dense(4L, name = "head")(x)
  keras$Model(inputs, outputs, name = "residual")
}

# Rules for it on the book's mesh: each block's "up" kernel split by
# columns and its "down" kernel by rows over "model".
residual_blocks_layout <- function(mesh = book_mesh()) {
  kerasmesh::layout_map(mesh,
                        ".*up_.*kernel" = c(NA, "model"),
                        ".*up_.*bias" = "model",
                        ".*down_.*kernel" = c("model", NA))
}

residual_blocks_data <- function(n = 64L, width = 16L) {
  set.seed(5)
  list(x = kerasmesh::numpy_array(matrix(rnorm(n * width), n)),
       y = kerasmesh::numpy_array(matrix(rnorm(n * 4), n)))
}
