# The MLP of helper-training.R (32 -> 64 -> 16), as a builder for layout_cost().
mlp_builder <- function() {
  keras <- keras()
  function() {
    keras$Sequential(list(
      keras$Input(shape = list(32L)),
      keras$layers$Dense(64L, activation = "relu", name = "dense"),
      keras$layers$Dense(16L, name = "dense_1")
    ), name = "sequential")
  }
}
