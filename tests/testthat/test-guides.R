# The Keras guides replayed in R with tiny models: what works must keep
# working. The distribution guide's data- and model-parallel training; LoRA
# (only trainable weights get optimizer slots); mixed precision, gradient
# accumulation, LossScaleOptimizer and int8 bytes, measured on the placed
# arrays and by XLA; saving and loading under another layout.

# The first epochs' losses of the MLP, trained as train_mlp() does.
mlp_losses <- function(model, data) {
  history <- model$fit(data$x, data$y, epochs = 3L, batch_size = 16L,
                       shuffle = FALSE, verbose = 0L)
  unlist(history$history$loss)
}

test_that("the guide's data- and model-parallel losses are undistributed's", {
  skip_if_no_keras()
  data <- mlp_data()
  reference <- mlp_losses(build_mlp(), data)
  dp <- with_distribution(data_parallel(), mlp_losses(build_mlp(), data))
  mp <- with_distribution(model_parallel(book_layout()),
                          mlp_losses(build_mlp(), data))
  expect_length(reference, 3)
  expect_true(reference[3] < reference[1])
  expect_equal(dp, reference, tolerance = 1e-6)
  expect_equal(mp, reference, tolerance = 1e-6)
})

# One training step of `make()` under `dist`, then what its arrays hold on
# one device, by source, against layout_cost() (XLA's argument bytes) and
# layout_plan() of the same model.
expect_costed_as_placed <- function(make, dist, lm) {
  model <- with_distribution(dist, train_mlp(make(), mlp_data(16), 1L))
  real <- variable_sharding(model)
  placed <- tapply(real$device_bytes, real$source, sum)
  cost <- layout_cost(model, dist, batch_size = 16)
  expect_equal(cost$memory[["weights"]], placed[["model"]])
  expect_equal(cost$memory[["optimizer"]], placed[["optimizer"]])
  expect_equal(cost$xla[["argument"]],
               sum(cost$memory[c("weights", "optimizer", "inputs")]))
  s <- summary(layout_plan(model, lm))
  expect_equal(s$device_weights, placed[["model"]])
  expect_equal(s$device_optimizer, placed[["optimizer"]])
  invisible(real)
}

test_that("LoRA: Adam's slots are counted for the trainable weights only", {
  skip_if_no_keras()
  lora <- function() {
    model <- build_mlp()
    model$get_layer("dense")$enable_lora(rank = 2L)
    model
  }
  real <- expect_costed_as_placed(lora, model_parallel(book_layout()),
                                  book_layout())
  trainable <- c("sequential/dense/bias", "sequential/dense/lora_kernel_a",
                 "sequential/dense/lora_kernel_b", "sequential/dense_1/kernel",
                 "sequential/dense_1/bias")
  slots <- real$path[real$source == "optimizer"]
  # Two slots per trainable weight, and Adam's two counters.
  expect_length(slots, 2 * length(trainable) + 2)
  expect_false(any(grepl("dense_kernel_(momentum|velocity)$", slots)))
  plan <- layout_plan(lora, book_layout())
  expect_setequal(plan$path[plan$trainable], trainable)
})

test_that("mixed precision bytes match XLA and the placed arrays", {
  skip_if_no_keras()
  keras <- keras()
  old <- keras$config$dtype_policy()
  keras$config$set_dtype_policy("mixed_bfloat16")
  withr::defer(keras$config$set_dtype_policy(old))
  real <- expect_costed_as_placed(build_mlp, model_parallel(book_layout()),
                                  book_layout())
  # The variables stay float32 under the mixed policy.
  expect_identical(unique(real$dtype[real$source == "model"]), "float32")
})

test_that("gradient accumulation and LossScaleOptimizer bytes match", {
  skip_if_no_keras()
  keras <- keras()
  accumulating <- recompiled(build_mlp, function() {
    keras$optimizers$Adam(gradient_accumulation_steps = 2L)
  })
  real <- expect_costed_as_placed(accumulating, data_parallel(),
                                  data_parallel())
  expect_true(any(grepl("accumulat", real$path[real$source == "optimizer"])))
  loss_scaled <- recompiled(build_mlp, function() {
    keras$optimizers$LossScaleOptimizer(keras$optimizers$Adam())
  })
  expect_costed_as_placed(loss_scaled, model_parallel(book_layout()),
                          book_layout())
})

test_that("int8 bytes match XLA and the placed arrays", {
  skip_if_no_keras()
  dist <- model_parallel(book_layout())
  model <- with_distribution(dist, {
    model <- build_mlp()
    model$quantize("int8")
    model
  })
  real <- variable_sharding(model)
  kernels <- real[grepl("/kernel$", real$path), ]
  expect_identical(unique(kernels$dtype), "int8")
  expect_identical(kernels$device_bytes, kernels$bytes / 4)
  plan <- summary(layout_plan(model, book_layout()))
  expect_equal(plan$device_weights, sum(real$device_bytes))
  cost <- layout_cost(model, dist, batch_size = 16, optimizer = "adam")
  expect_equal(cost$memory[["weights"]], sum(real$device_bytes))
  expect_equal(cost$xla[["argument"]],
               sum(cost$memory[c("weights", "optimizer", "inputs")]))
})

test_that("quantizing a sharded model outside its distribution warns", {
  skip_if_no_keras()
  dist <- model_parallel(book_layout())
  model <- with_distribution(dist, build_mlp())
  expect_snapshot(model$quantize("int8"))
  # What it warns about: the int8 kernels are on one device now.
  real <- variable_sharding(model)
  expect_identical(real$copies[real$path == "sequential/dense/kernel"], 1L)
  expect_warning(with_distribution(dist, build_mlp())$quantize("int8"),
                 class = "kerasmesh_warning_quantize_placement")
  # A model on one device quantizes without a word.
  expect_no_warning(build_mlp()$quantize("int8"))
})

test_that("a model saved under one layout loads under another", {
  skip_if_no_keras()
  keras <- keras()
  path <- file.path(withr::local_tempdir(), "mlp.keras")
  trained <- with_distribution(model_parallel(book_layout()), {
    model <- train_mlp(build_mlp(), mlp_data(), 1L)
    model$save(path)
    model
  })
  other <- device_mesh(c(data = 4, model = 2))
  lm <- layout_map(other, ".*dense.*kernel" = c("model", NA))
  loaded <- with_distribution(model_parallel(lm), {
    keras$models$load_model(path)
  })
  placed <- variable_sharding(loaded)
  # Keras names a loaded model's variables without the model's name.
  expect_identical(placed$path[1], "dense/kernel")
  expect_identical(placed$spec[1], "PartitionSpec('model', None)")
  expect_identical(placed$copies[1], 4L)
  expect_identical(unname(variable_values(loaded)[1:4]),
                   unname(variable_values(trained)[1:4]))
  # It trains on, under the new layout.
  expect_no_error(with_distribution(model_parallel(lm),
                                    train_mlp(loaded, mlp_data(), 1L)))
})
