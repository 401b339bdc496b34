# A builder for layout_plan() and layout_cost(): Sequential "sequential" of
# Input(inputs), Dense "dense" (relu) and Dense "dense_1".
two_dense_builder <- function(inputs, hidden, outputs, activation = NULL) {
  keras <- keras()
  function() {
    keras$Sequential(list(
      keras$Input(shape = list(as.integer(inputs))),
      keras$layers$Dense(as.integer(hidden), activation = "relu",
                         name = "dense"),
      keras$layers$Dense(as.integer(outputs), activation = activation,
                         name = "dense_1")
    ), name = "sequential")
  }
}

# The MLP of helper-training.R (32 -> 64 -> 16), as a builder for layout_cost().
mlp_builder <- function() two_dense_builder(32, 64, 16)
