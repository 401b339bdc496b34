# Models the tests and fixtures/make-fixtures.R share.

# Keras's own end-to-end output-sharding case: an MLP whose layer outputs
# rules can shard. `name` pins the model's name (Keras numbers it else).
output_sharding_model <- function(name = NULL) {
  keras <- reticulate::import("keras")
  inputs <- keras$layers$Input(shape = list(28L, 28L, 1L))
  y <- keras$layers$Flatten()(inputs)
  y <- keras$layers$Dense(units = 200L, use_bias = FALSE,
                          activation = "relu")(y)
  y <- keras$layers$Dropout(0.4)(y)
  y <- keras$layers$Dense(units = 16L, activation = "softmax")(y)
  keras$Model(inputs = inputs, outputs = y, name = name)
}
