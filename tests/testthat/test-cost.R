test_that("layout_cost() equals the bytes of a real training step", {
  skip_if_no_keras()
  dist <- model_parallel(book_layout())
  cost <- layout_cost(mlp_builder(), dist, batch_size = 16,
                      optimizer = "adam", loss = "mse")
  expect_s3_class(cost, "kerasmesh_layout_cost")
  # One real step on the mesh, then where its arrays are.
  model <- with_distribution(dist, {
    model <- build_mlp()
    train_mlp(model, mlp_data(16), epochs = 1L)
  })
  real <- variable_sharding(model)
  per_source <- tapply(real$device_bytes, real$source, sum)
  expect_equal(cost$memory[["weights"]], per_source[["model"]])
  expect_equal(cost$memory[["optimizer"]], per_source[["optimizer"]])
  # The planner's figures: one placement code path.
  s <- summary(layout_plan(mlp_builder(), book_layout(), batch_size = 16,
                           optimizer = "adam"))
  expect_equal(cost$memory[["weights"]], s$device_weights)
  expect_equal(cost$memory[["optimizer"]], s$device_optimizer)
  expect_equal(cost$xla[["argument"]], sum(cost$memory[c(
    "weights", "optimizer", "inputs")]))
})

test_that("layout_cost() reports collectives by kind and mesh axis", {
  skip_if_no_keras()
  cost <- layout_cost(mlp_builder(), model_parallel(book_layout()),
                      batch_size = 16, optimizer = "adam", loss = "mse")
  col <- cost$collectives
  expect_setequal(col$axes, c("data", "model"))
  # Each device all-reduces its quarter of the gradients, and the loss,
  # over "data": (32 * 64 + 64 + 64 * 16 + 16) / 4 floats + 4 bytes.
  data <- col$bytes[col$kind == "all-reduce" & col$axes == "data"]
  expect_equal(data, 4 * (32 * 64 + 64 + 64 * 16 + 16) / 4 + 4)
  expect_equal(cost$traffic[["data"]], data)
  expect_equal(sum(cost$traffic), sum(cost$ops$bytes))
  expect_true(all(lengths(cost$ops$groups) > 0))
  expect_identical(cost$versions$keras, keras()$`__version__`)
  expect_gt(cost$compile_seconds, 0)
})

test_that("layout_cost() prints in the house style", {
  skip_if_no_keras()
  cost <- layout_cost(mlp_builder(), model_parallel(book_layout()),
                      batch_size = 16, optimizer = "adam", loss = "mse")
  out <- format(cost, device_memory = "16kB")
  expect_true(all(nchar(out) <= 80))
  expect_match(out[1], "<kerasmesh_layout_cost> model \"sequential")
  expect_true(any(grepl("does not fit", out)))
  expect_true(any(grepl("all-reduce  data", out, fixed = TRUE)))
  expect_output(expect_invisible(print(cost)), "Collectives per step")
})

test_that("compare_layouts() puts data and model parallelism side by side", {
  skip_if_no_keras()
  cmp <- compare_layouts(
    mlp_builder(),
    list(data_parallel = data_parallel(),
         model_parallel = model_parallel(book_layout())),
    batch_size = 16, optimizer = "adam", loss = "mse",
    device_memory = "30kB"
  )
  expect_s3_class(cmp, "kerasmesh_layout_comparison")
  expect_identical(cmp$layout, c("data_parallel", "model_parallel"))
  # Full weights on every device against a quarter of them.
  expect_equal(cmp$weights[1], 4 * cmp$weights[2])
  expect_identical(cmp$fits, c(FALSE, TRUE))
  traffic <- attr(cmp, "traffic")
  expect_setequal(traffic$layout, cmp$layout)
  df <- as.data.frame(cmp)
  expect_identical(class(df), "data.frame")
  out <- format(cmp)
  expect_true(all(nchar(out) <= 80))
  expect_true(any(grepl("Traffic by mesh axis", out)))
})

test_that("layout_cost() gives the planner's errors, not XLA's", {
  skip_if_no_keras()
  keras <- keras()
  odd <- function() {
    keras$Sequential(list(keras$Input(shape = list(32L)),
                          keras$layers$Dense(6L)))
  }
  dist <- model_parallel(book_layout())
  expect_error(layout_cost(odd, dist, batch_size = 16),
               class = "kerasmesh_error_layout_divisibility")
  expect_error(layout_cost(mlp_builder(), dist, batch_size = 15),
               class = "kerasmesh_error_batch_size")
  expect_error(layout_cost(mlp_builder(), dist, batch_size = 16,
                           loss = c("mse", "mse")),
               class = "kerasmesh_error_loss")
  expect_error(layout_cost(mlp_builder(), dist, batch_size = 16,
                           timeout = 1e-4),
               class = "kerasmesh_error_timeout")
})

test_that("layout_cost() checks its arguments in R", {
  skip_if_no_keras()
  dist <- model_parallel(book_layout())
  expect_snapshot(error = TRUE, {
    layout_cost(mlp_builder(), NULL, batch_size = 16)
    layout_cost(mlp_builder(), dist, batch_size = 0)
    layout_cost(mlp_builder(), dist, batch_size = 16, loss = identity)
    layout_cost(mlp_builder(), dist, batch_size = 16, input_shapes = 12)
    layout_cost(mlp_builder(), dist, batch_size = 16, timeout = -1)
    layout_cost(mlp_builder(), dist, 16, "adam", "mse", NULL, 3)
    compare_layouts(mlp_builder(), list(dist), batch_size = 16)
  })
})

test_that("input_shapes fills in unknown dimensions of several inputs", {
  skip_if_no_keras()
  keras <- keras()
  backbone <- function() {
    ids <- keras$Input(shape = list(NULL), dtype = "int32",
                       name = "token_ids")
    mask <- keras$Input(shape = list(NULL), dtype = "int32",
                        name = "padding_mask")
    x <- keras$layers$Embedding(100L, 8L)(ids)
    keras$Model(list(token_ids = ids, padding_mask = mask),
                keras$layers$Dense(8L)(x))
  }
  expect_error(layout_cost(backbone, data_parallel(), batch_size = 8),
               class = "kerasmesh_error_input_shapes")
  cost <- layout_cost(backbone, data_parallel(), batch_size = 8,
                      input_shapes = list(token_ids = 12, padding_mask = 12))
  expect_match(cost$loss, "stand-in")
  expect_setequal(cost$inputs$name, c("token_ids", "padding_mask"))
  expect_equal(cost$memory[["inputs"]], 2 * 12 * 4)
})
