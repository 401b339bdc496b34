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

test_that("layout_cost() reports collectives by collective and mesh axis", {
  skip_if_no_keras()
  cost <- layout_cost(mlp_builder(), model_parallel(book_layout()),
                      batch_size = 16, optimizer = "adam", loss = "mse")
  col <- cost$collectives
  expect_setequal(col$axes, c("data", "model"))
  # Each device all-reduces its quarter of the gradients, and the loss,
  # over "data": (32 * 64 + 64 + 64 * 16 + 16) / 4 floats + 4 bytes.
  data <- col$bytes[col$collective == "all-reduce" & col$axes == "data"]
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
  out <- format(cost, memory = "16kB")
  expect_true(all(nchar(out) <= 80))
  expect_match(out[1], "<kerasmesh_layout_cost> model \"sequential")
  expect_true(any(grepl("does not fit", out)))
  expect_true(any(grepl("all-reduce +data", out)))
  expect_true(any(grepl("reduce-scatter +model", out)))
  expect_output(expect_invisible(print(cost)), "Collectives per step")
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
  mlp_builder <- function() function() stop("not built")
  dist <- fixture_distribution()
  expect_snapshot(error = TRUE, {
    layout_cost(mlp_builder(), NULL, batch_size = 16)
    layout_cost(mlp_builder(), dist, batch_size = 0)
    layout_cost(mlp_builder(), dist, batch_size = 16, loss = identity)
    layout_cost(mlp_builder(), dist, batch_size = 16, input_shapes = 12)
    layout_cost(mlp_builder(), dist, batch_size = 16, timeout = -1)
    layout_cost(mlp_builder(), dist, 16, "adam", "mse", NULL, NULL, 1, 3)
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

test_that("layout costs print from their descriptions", {
  expect_snapshot({
    print(fixture_cost("cost-model-parallel"))
    print(fixture_cost("cost-no-collectives"), memory = "32 KiB")
  })
})

test_that("a cost says whether it fits a device memory", {
  cost <- fixture_cost()
  fits <- format(cost, memory = "20kB")
  expect_match(fits, "^Device memory 20kB: fits \\(19.1 kB of 20kB\\)$",
               all = FALSE)
  over <- format(cost, memory = 1e4)
  expect_match(over, "does not fit (19.1 kB of 10 kB)", fixed = TRUE,
               all = FALSE)
  expect_false(any(grepl("^Device memory", format(cost))))
  expect_error(format(cost, memory = "lots"),
               class = "kerasmesh_error_argument")
})

test_that("a cost's memory parts add up and traffic is by mesh axis", {
  cost <- fixture_cost()
  m <- cost$memory
  expect_equal(sum(m[c("weights", "optimizer", "inputs", "activations",
                       "outputs")]), m[["total"]])
  expect_equal(cost$xla[["argument"]],
               sum(m[c("weights", "optimizer", "inputs")]))
  # Largest first.
  expect_identical(names(cost$traffic), c("model", "data"))
  expect_equal(sum(cost$traffic), sum(cost$collectives$bytes))
  expect_equal(sum(cost$traffic), sum(cost$ops$bytes))
  expect_identical(cost$batch_size, 16L)
  expect_s3_class(cost$mesh, "kerasmesh_device_mesh")
  none <- fixture_cost("cost-no-collectives")
  expect_identical(nrow(none$collectives), 0L)
  expect_identical(none$traffic, stats::setNames(numeric(), character()))
})

test_that("a comparison is a data frame of layouts, printed side by side", {
  cmp <- fixture_comparison()
  expect_s3_class(cmp, c("kerasmesh_layout_comparison", "data.frame"))
  expect_identical(cmp$layout, c("dp", "mp"))
  expect_identical(cmp$mesh, c("batch=8", "data=2,model=4"))
  expect_null(cmp$fits)
  expect_lt(cmp$total[[2]], cmp$total[[1]])
  df <- as.data.frame(cmp)
  expect_identical(class(df), "data.frame")
  expect_null(attr(df, "traffic"))
  traffic <- attr(cmp, "traffic")
  expect_identical(traffic$layout, c("dp", rep("mp", 4)))
  expect_snapshot({
    print(cmp)
    print(fixture_comparison(memory = "30kB"))
  })
})

test_that("layout_cost() and compare_layouts() check arguments before Python", {
  dist <- fixture_distribution()
  build <- function() stop("not built")
  expect_error(layout_cost(build, NULL, batch_size = 16),
               class = "kerasmesh_error_distribution")
  expect_error(layout_cost(build, "dp", batch_size = 16),
               class = "kerasmesh_error_distribution")
  expect_error(layout_cost(build, fixture_layout_map(), batch_size = 16),
               class = "kerasmesh_error_distribution")
  expect_error(layout_cost(build, dist, batch_size = 0),
               class = "kerasmesh_error_argument")
  expect_error(layout_cost(build, dist, batch_size = 16, optimizer = 1),
               class = "kerasmesh_error_optimizer")
  expect_error(layout_cost(build, dist, batch_size = 16, loss = identity),
               class = "kerasmesh_error_loss")
  expect_error(layout_cost(build, dist, batch_size = 16, loss = c("mse", NA)),
               class = "kerasmesh_error_loss")
  expect_error(layout_cost(build, dist, batch_size = 16, loss = list()),
               class = "kerasmesh_error_loss")
  expect_error(layout_cost(build, dist, batch_size = 16, input_shapes = 12),
               class = "kerasmesh_error_input_shapes")
  expect_error(layout_cost(build, dist, batch_size = 16,
                           input_shapes = list(128)),
               class = "kerasmesh_error_input_shapes")
  expect_error(layout_cost(build, dist, batch_size = 16,
                           input_shapes = list(ids = 0)),
               class = "kerasmesh_error_input_shapes")
  expect_error(layout_cost(build, dist, batch_size = 16,
                           input_shapes = list(ids = 1.5)),
               class = "kerasmesh_error_input_shapes")
  expect_error(layout_cost(build, dist, batch_size = 16, timeout = 0),
               class = "kerasmesh_error_argument")
  expect_error(
    layout_cost(build, dist, 16, "adam", "mse", NULL, NULL, 1, 3),
    class = "rlib_error_dots_nonempty"
  )
  expect_error(layout_cost(42, dist, batch_size = 16),
               class = "kerasmesh_error_model")
  expect_error(compare_layouts(build, list(dist), batch_size = 16),
               class = "kerasmesh_error_argument")
  expect_error(compare_layouts(build, dist, batch_size = 16),
               class = "kerasmesh_error_argument")
  expect_error(compare_layouts(build, list(a = dist, a = dist), 16),
               "Received \"a\" more than once",
               class = "kerasmesh_error_argument")
  expect_error(compare_layouts(build, list(a = dist), 16,
                               memory = "lots"),
               class = "kerasmesh_error_argument")
  expect_error(compare_layouts(build, list(a = dist), batch_size = -1),
               class = "kerasmesh_error_argument")
  expect_error(compare_layouts(42, list(a = dist), batch_size = 16),
               class = "kerasmesh_error_model")
  expect_snapshot(error = TRUE, {
    layout_cost(build, dist, batch_size = 16, input_shapes = list(128))
    layout_cost(build, dist, batch_size = 16, loss = list("mse", 2))
    compare_layouts(build, list(dp = dist, dist), batch_size = 16)
  })
})

test_that("a builder without a batch size is a classed error", {
  dist <- fixture_distribution()
  build <- function() stop("not built")
  expect_error(layout_cost(build, dist), class = "kerasmesh_error_argument")
  expect_error(compare_layouts(build, list(a = dist)),
               class = "kerasmesh_error_argument")
  expect_error(search_layout(build, fixture_mesh()),
               class = "kerasmesh_error_argument")
  expect_snapshot(error = TRUE, layout_cost(build, dist))
})

test_that("a dict-output model takes a loss per output key, as Keras does", {
  skip_if_no_keras()
  keras <- keras()
  build <- function() {
    inputs <- keras$Input(shape = list(32L), name = "x")
    keras$Model(inputs, list(
      score = keras$layers$Dense(8L, name = "a")(inputs),
      label = keras$layers$Dense(4L, name = "b")(inputs)
    ))
  }
  cost <- layout_cost(build, model_parallel(book_layout()), batch_size = 16,
                      loss = list(score = "mse", label = "mae"))
  expect_identical(cost$loss, "mae, mse")
  # Device 0's batch: 8 rows of 32 inputs and of 8 + 4 targets.
  expect_equal(cost$memory[["inputs"]], 8 * (32 + 8 + 4) * 4)
  expect_error(
    layout_cost(build, model_parallel(book_layout()), batch_size = 16,
                loss = list(score = "mse", labels = "mae")),
    "Not outputs: \"labels\"", class = "kerasmesh_error_loss"
  )
})

test_that("targets under mixed_bfloat16 count as the float32 Keras feeds", {
  skip_if_no_keras()
  config <- keras()$config
  before <- config$dtype_policy()
  config$set_dtype_policy("mixed_bfloat16")
  withr::defer(config$set_dtype_policy(before))
  cost <- layout_cost(mlp_builder(), model_parallel(book_layout()),
                      batch_size = 16, loss = "mse")
  # 8 rows of 32 inputs and 16 targets, 4 bytes each (the outputs are bf16).
  expect_equal(cost$memory[["inputs"]], 8 * (32 + 16) * 4)
})

test_that("layout_cost() costs remat and micro-batches on the same step", {
  skip_if_no_keras()
  build <- function() residual_blocks_model(blocks = 6L)
  dist <- model_parallel(residual_blocks_layout())
  cost <- function(...) {
    layout_cost(build, dist, batch_size = 512, optimizer = "adam",
                loss = "mse", ...)
  }
  none <- cost()
  full <- cost(remat = "full")
  four <- cost(accumulation_steps = 4)
  expect_identical(c(none$remat, full$remat), c("none", "full"))
  expect_identical(none$recompute_flops, 0)
  expect_gt(full$recompute_flops, 0)
  expect_lt(full$recompute_flops, full$flops)
  expect_lt(full$xla[["temp"]], none$xla[["temp"]])
  expect_identical(c(four$batch_size, four$micro_batch_size,
                     four$accumulation_steps), c(512L, 128L, 4L))
  expect_equal(four$memory[["optimizer"]],
               none$memory[["optimizer"]] + none$memory[["weights"]])
  expect_equal(four$memory[["inputs"]], none$memory[["inputs"]] / 4)
  out <- format(full)
  expect_true(any(grepl("remat \"full\" per block: recomputes", out)))
  expect_false(any(grepl("micro-batches", out)))
  expect_true(any(grepl("4 micro-batches of 128 per update", format(four))))
  expect_false(any(grepl("remat", format(none))))
})

test_that("layout_cost() and compare_layouts() refuse bad levers", {
  skip_if_no_keras()
  expect_snapshot(error = TRUE, {
    layout_cost(mlp_builder(), data_parallel(), 16, remat = "full")
    layout_cost(mlp_builder(), data_parallel(), 16, accumulation_steps = 4)
  })
  cmp <- compare_layouts(
    function() residual_blocks_model(), list(dp = data_parallel()),
    batch_size = 32, remat = "save_matmuls", accumulation_steps = 2
  )
  cost <- attr(cmp, "costs")$dp
  expect_identical(cost$remat, "save_matmuls")
  expect_identical(cost$micro_batch_size, 16L)
})
