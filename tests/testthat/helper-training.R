# A small MLP, 32 -> 64 -> 16, with fixed initial weights, and fixed data.
build_mlp <- function() {
  keras <- keras()
  keras$utils$set_random_seed(7L)
  # Fixed names keep variable paths stable across the models tests build.
  model <- keras$Sequential(list(
    keras$Input(shape = list(32L)),
    keras$layers$Dense(64L, activation = "relu", name = "dense"),
    keras$layers$Dense(16L, name = "dense_1")
  ), name = "sequential")
  model$compile(
    optimizer = keras$optimizers$Adam(learning_rate = 0.01, name = "adam"),
    loss = "mse"
  )
  model
}

mlp_data <- function(n = 64) {
  set.seed(11)
  list(
    x = kerasmesh::numpy_array(matrix(rnorm(n * 32), n)),
    y = kerasmesh::numpy_array(matrix(rnorm(n * 16), n))
  )
}

train_mlp <- function(model, data, epochs = 3L) {
  model$fit(data$x, data$y, epochs = epochs, batch_size = 16L,
            shuffle = FALSE, verbose = 0L)
  model
}

max_abs_diff <- function(a, b) {
  stopifnot(identical(lengths(a), lengths(b)))
  max(mapply(function(p, q) max(abs(p - q)), a, b))
}

book_layout <- function(mesh = book_mesh()) {
  kerasmesh::layout_map(mesh,
                        ".*dense.*kernel" = c(NA, "model"),
                        ".*dense.*bias" = "model")
}

# Global data for runs of several processes: 64 rows, 4 global batches of 16.
shared_mlp_data <- function(n = 64) {
  set.seed(11)
  list(x = matrix(rnorm(n * 32), n), y = matrix(rnorm(n * 16), n))
}

# A builder: `build()`'s model compiled again, with a new `optimizer()` (a
# function that makes one) and the mean squared error.
recompiled <- function(build, optimizer) {
  force(build)
  force(optimizer)
  function() {
    model <- build()
    model$compile(optimizer = optimizer(), loss = "mse")
    model
  }
}
