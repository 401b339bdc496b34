# The MLP and its training, the same in a worker and in the test process.
# Each process fits its share of every global batch (process_data()).
train_shared_mlp <- function(x, y, epochs = 3L, global_batch = 16L) {
  keras <- reticulate::import("keras")
  mesh <- kerasmesh::device_mesh(c(data = 2, model = 4))
  layouts <- kerasmesh::layout_map(
    mesh,
    ".*dense.*kernel" = c(NA, "model"),
    ".*dense.*bias" = "model"
  )
  kerasmesh::local_distribution(kerasmesh::model_parallel(
    layouts, batch_dim_name = "data", auto_shard_dataset = FALSE
  ))
  keras$utils$set_random_seed(7L)
  model <- keras$Sequential(list(
    keras$Input(shape = list(ncol(x))),
    keras$layers$Dense(64L, activation = "relu", name = "dense"),
    keras$layers$Dense(ncol(y), name = "dense_1")
  ), name = "sequential")
  model$compile(
    optimizer = keras$optimizers$Adam(learning_rate = 0.01), loss = "mse"
  )
  d <- kerasmesh::process_data(x, y, batch_size = global_batch)
  history <- model$fit(
    d$x, d$y, epochs = epochs, batch_size = d$batch_size, shuffle = FALSE,
    verbose = 0L
  )
  list(
    loss = as.numeric(unlist(history$history$loss)),
    weights = lapply(kerasmesh::variable_values(model), as.numeric),
    rows = d$rows
  )
}
environment(train_shared_mlp) <- globalenv()

shared_data <- function(n = 64) {
  set.seed(11)
  list(x = matrix(rnorm(n * 32), n), y = matrix(rnorm(n * 16), n))
}
