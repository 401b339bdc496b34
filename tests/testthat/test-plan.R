# Small models with fixed names, so paths (and snapshots) don't depend on
# how many layers the session has built before.
net <- function(units = 8L, bias = TRUE) {
  k <- keras()
  function() {
    k$Sequential(list(
      k$Input(shape = list(4L)),
      k$layers$Dense(units, name = "out", use_bias = bias)
    ), name = "net")
  }
}

functional_net <- function() {
  k <- keras()
  function() {
    inputs <- k$Input(shape = list(4L))
    hidden <- k$layers$Dense(8L, name = "hidden")(inputs)
    outputs <- k$layers$Dense(4L, name = "out")(hidden)
    k$Model(inputs, outputs, name = "fnet")
  }
}

test_that("layout_plan() plans the book's model without allocating it", {
  skip_if_no_keras()
  k <- keras()
  built <- new.env()
  book <- function() {
    inputs <- k$Input(shape = list(16000L))
    hidden <- k$layers$Dense(64000L, activation = "relu")(inputs)
    outputs <- k$layers$Dense(8000L, activation = "sigmoid")(hidden)
    built$model <- k$Model(inputs, outputs)
  }
  lm <- layout_map(book_mesh(), ".*kernel" = c(NA, "model"),
                   ".*bias" = "model")
  plan <- layout_plan(book, lm)
  s <- summary(plan)
  expect_identical(s$parameters, 1536072000)
  expect_identical(s$bytes, 1536072000 * 4)
  expect_identical(s$device_weights, s$bytes / 4)
  expect_identical(sum(plan$device_bytes), s$bytes / 4)
  expect_identical(plan$shard_shape[[1]], c(16000L, 16000L))
  expect_identical(plan$copies, rep(2L, 4))
  # The builder's variables have shapes but were never given values.
  value <- reticulate::py_get_attr(built$model$variables[[1]], "_value")
  expect_true(reticulate::py_is_null_xptr(value) ||
                identical(reticulate::py_to_r(value), NULL))
})

test_that("layout_plan() prints the plan and its summary", {
  skip_if_no_keras()
  lm <- layout_map(book_mesh(), ".*hidden/kernel" = c(NA, "model"),
                   ".*hidden/bias" = "model", "out/kernel" = c("model", NA))
  plan <- layout_plan(functional_net(), lm, batch_size = 8,
                      optimizer = "adam")
  expect_snapshot({
    plan
    summary(plan)
  })
})

test_that("as.data.frame() and subsets drop the plan's class", {
  skip_if_no_keras()
  plan <- layout_plan(net(), layout_map(book_mesh()))
  df <- as.data.frame(plan)
  expect_identical(class(df), "data.frame")
  expect_named(df, c("path", "shape", "dtype", "trainable", "rule", "axes",
                     "shard_shape", "copies", "bytes", "device_bytes",
                     "problem"))
  expect_identical(df$path, c("net/out/kernel", "net/out/bias"))
  expect_identical(df$axes[[1]], c(NA_character_, NA_character_))
  expect_identical(df$copies, c(8L, 8L))
  expect_identical(class(plan[1, ]), "data.frame")
})

test_that("layout_plan() takes models, Keras objects and distributions", {
  skip_if_no_keras()
  lm <- layout_map(book_mesh(), ".*kernel" = c(NA, "model"))
  model <- net()()
  from_model <- layout_plan(model, lm)
  from_keras <- layout_plan(net(), reticulate::r_to_py(lm))
  from_dist <- layout_plan(net(), model_parallel(lm, batch_dim_name = "model"),
                           batch_size = 8)
  expect_identical(from_model$shard_shape, from_keras$shard_shape)
  expect_identical(summary(from_dist)$batch_dim_name, "model")
  expect_identical(summary(from_dist)$device_batch, 2)
})

test_that("optimizer slots are counted from the optimizer's variables", {
  skip_if_no_keras()
  lm <- layout_map(book_mesh(), ".*kernel" = c(NA, "model"))
  adam <- summary(layout_plan(net(), lm, optimizer = "adam"))
  expect_identical(adam$optimizer, "Adam")
  expect_identical(adam$slots, 2)
  # Two slots per variable, laid out like it, plus two replicated scalars.
  expect_identical(adam$device_optimizer, 2 * adam$device_weights + 8)
  expect_identical(adam$device_total,
                   4 * adam$device_weights + 8)
  sgd <- summary(layout_plan(net(), lm, optimizer = "sgd"))
  expect_identical(sgd$slots, 0)
  none <- summary(layout_plan(net(), lm))
  expect_null(none$optimizer)
  expect_identical(none$device_total, 2 * none$device_weights)
})

test_that("a rule that matches nothing warns, hinting at the model's name", {
  skip_if_no_keras()
  lm <- layout_map(book_mesh(), "out/kernel" = c(NA, "model"))
  expect_warning(check_layout(net(), lm),
                 class = "kerasmesh_warning_unmatched_rule")
  expect_snapshot(check_layout(net(), lm))
  expect_identical(summary(layout_plan(net(), lm))$unmatched, "out/kernel")
})

test_that("a rule that matches nothing hints at a leading .*", {
  skip_if_no_keras()
  lm <- layout_map(book_mesh(), "kernel" = c(NA, "model"))
  w <- expect_warning(check_layout(functional_net(), lm),
                      class = "kerasmesh_warning_layout_plan")
  expect_match(conditionMessage(w), 'Rule "kernel" matches no variable')
  expect_match(conditionMessage(w), '".\\*kernel" would match 2 variables')
})

test_that("a variable matched by several rules is an error", {
  skip_if_no_keras()
  lm <- layout_map(book_mesh(), ".*out.*" = c(NA, "model"),
                   ".*kernel" = c(NA, "model"))
  expect_error(check_layout(net(bias = FALSE), lm),
               class = "kerasmesh_error_layout_ambiguous")
  expect_snapshot(check_layout(net(bias = FALSE), lm), error = TRUE)
})

test_that("a layout shorter than the variable's rank warns", {
  skip_if_no_keras()
  lm <- layout_map(book_mesh(), ".*kernel" = "model")
  expect_warning(check_layout(net(bias = FALSE), lm),
                 class = "kerasmesh_warning_layout_rank")
  expect_snapshot(check_layout(net(bias = FALSE), lm))
  plan <- layout_plan(net(bias = FALSE), lm)
  expect_identical(plan$axes[[1]], c("model", NA))
  expect_identical(plan$shard_shape[[1]], c(1L, 8L))
})

test_that("a layout longer than the variable's rank is an error", {
  skip_if_no_keras()
  lm <- layout_map(book_mesh(), ".*kernel" = c(NA, "model"),
                   ".*bias" = c(NA, "model"))
  err <- expect_error(check_layout(net(), lm),
                      class = "kerasmesh_error_layout_rank")
  expect_match(conditionMessage(err), '"net/out/bias"')
  expect_match(conditionMessage(err), '".\\*bias"')
  expect_identical(layout_plan(net(), lm)$problem[[2]],
                   "layout longer than rank 1")
})

test_that("a dimension its axis can't divide names variable, size and axis", {
  skip_if_no_keras()
  lm <- layout_map(book_mesh(), ".*kernel" = c(NA, "model"))
  err <- expect_error(check_layout(net(units = 6L, bias = FALSE), lm),
                      class = "kerasmesh_error_layout_divisibility")
  expect_s3_class(err, "kerasmesh_error_layout_plan")
  expect_s3_class(err$plan, "kerasmesh_layout_plan")
  expect_snapshot(check_layout(net(units = 6L, bias = FALSE), lm),
                  error = TRUE)
})

test_that("an axis the mesh doesn't have is an error", {
  skip_if_no_keras()
  k <- keras()
  lm <- reticulate::r_to_py(layout_map(book_mesh()))
  other <- device_mesh(c(shard = 8))
  reticulate::py_set_item(
    lm, ".*kernel", k$distribution$TensorLayout(list(NULL, "shard"),
                                               reticulate::r_to_py(other))
  )
  expect_snapshot(check_layout(net(bias = FALSE), lm), error = TRUE)
  expect_error(check_layout(net(bias = FALSE), lm),
               class = "kerasmesh_error_layout_axes")
})

test_that("a batch size the batch axis can't divide is an error", {
  skip_if_no_keras()
  lm <- layout_map(book_mesh())
  expect_error(check_layout(net(), lm, batch_size = 5),
               class = "kerasmesh_error_batch_size")
  expect_snapshot(check_layout(net(), lm, batch_size = 5), error = TRUE)
  expect_silent(check_layout(net(), lm, batch_size = 6))
  expect_error(
    check_layout(net(), model_parallel(lm, batch_dim_name = "model"),
                 batch_size = 6),
    class = "kerasmesh_error_batch_size"
  )
})

test_that("several errors make one condition with every kind's class", {
  skip_if_no_keras()
  lm <- layout_map(book_mesh(), ".*kernel" = c(NA, "model"))
  err <- expect_error(
    check_layout(net(units = 6L, bias = FALSE), lm, batch_size = 3),
    class = "kerasmesh_error_batch_size"
  )
  expect_s3_class(err, "kerasmesh_error_layout_divisibility")
  expect_identical(nrow(err$problems), 2L)
})

test_that("a plan counts parameters as Keras does, without seed state", {
  skip_if_no_keras()
  # Its Dropout has a seed generator, whose state is a variable.
  build <- function() output_sharding_model(name = "mlp")
  plan <- layout_plan(build, layout_map(book_mesh()))
  expect_true(any(grepl("seed_generator", plan$path)))
  expect_equal(summary(plan)$parameters, build()$count_params())
  expect_match(format(plan), "Parameters: 160,016 ", fixed = TRUE,
               all = FALSE)
})

test_that("check_layout() accepts data_parallel(): all replicated", {
  skip_if_no_keras()
  dist <- data_parallel()
  plan <- check_layout(net(), dist, batch_size = 16)
  expect_s3_class(plan, "kerasmesh_layout_plan")
  expect_true(all(plan$copies == 8L))
  expect_identical(plan$device_bytes, plan$bytes)
  expect_identical(summary(plan)$batch_dim_name, "batch")
  expect_identical(summary(plan)$batch_ways, 8L)
  err <- expect_error(check_layout(net(), dist, batch_size = 12),
                      class = "kerasmesh_error_batch_size")
  expect_match(conditionMessage(err), "(4 left over)", fixed = TRUE)
  # Keras's own DataParallel too.
  expect_s3_class(layout_plan(net(), reticulate::r_to_py(dist)),
                  "kerasmesh_layout_plan")
})

test_that("layout_plan() checks its arguments", {
  skip_if_no_keras()
  lm <- layout_map(book_mesh())
  expect_snapshot(error = TRUE, {
    layout_plan(42, lm)
    layout_plan(net(), "lm")
    layout_plan(net(), lm, batch_size = 0)
    layout_plan(net(), lm, optimizer = 3)
    layout_plan(function() 3, lm)
  })
  expect_error(layout_plan(net(), lm, optimizer = "nope"),
               class = "kerasmesh_error_optimizer")
})

test_that("a builder that fails leaves Keras as it was", {
  skip_if_no_keras()
  lm <- layout_map(book_mesh())
  expect_error(layout_plan(function() stop("no model today"), lm),
               "no model today")
  model <- net()()
  value <- reticulate::py_get_attr(model$variables[[1]], "_value")
  expect_false(identical(reticulate::py_to_r(value), NULL))
  expect_s3_class(layout_plan(net(), lm), "kerasmesh_layout_plan")
})

test_that("a builder's own error reaches the caller with its classes", {
  skip_if_no_keras()
  lm <- layout_map(book_mesh())
  failing <- function() {
    rlang::abort("no model today", class = "my_builder_error")
  }
  err <- expect_error(layout_plan(failing, lm), class = "my_builder_error")
  expect_false(inherits(err, "kerasmesh_error_python"))
  expect_error(layout_cost(failing, model_parallel(lm), batch_size = 8),
               class = "my_builder_error")
  # A kerasmesh error raised inside the builder keeps its kind too.
  expect_error(layout_plan(function() layout_map(book_mesh(), 1), lm),
               class = "kerasmesh_error_layout_key")
})

test_that("layout_plan() checks its R arguments before Python", {
  lm <- fixture_layout_map()
  build <- function() stop("not built")
  expect_error(layout_plan(42, lm), class = "kerasmesh_error_model")
  expect_error(layout_plan("model", lm), class = "kerasmesh_error_model")
  expect_error(layout_plan(build, "lm"), class = "kerasmesh_error_layout_map")
  expect_error(layout_plan(build, fixture_mesh()),
               class = "kerasmesh_error_layout_map")
  expect_error(layout_plan(build, lm, batch_size = 0),
               class = "kerasmesh_error_argument")
  expect_error(layout_plan(build, lm, batch_size = 3e9),
               class = "kerasmesh_error_argument")
  expect_error(layout_plan(build, lm, batch_size = "16"),
               class = "kerasmesh_error_argument")
  expect_error(layout_plan(build, lm, optimizer = 3),
               class = "kerasmesh_error_optimizer")
  expect_error(layout_plan(build, lm, optimizer = ""),
               class = "kerasmesh_error_optimizer")
  expect_error(layout_plan(build, lm, replicated_share = 2),
               class = "kerasmesh_error_argument")
  expect_error(layout_plan(build, lm, replicated_share = NA),
               class = "kerasmesh_error_argument")
  expect_snapshot(error = TRUE, {
    layout_plan(build, fixture_mesh())
    layout_plan(build, lm, replicated_share = -0.1)
    layout_plan(list(), fixture_distribution())
  })
})

test_that("plans from descriptions keep their columns' R types", {
  plan <- fixture_plan()
  expect_identical(plan$path[1], "sequential/dense/kernel")
  expect_identical(plan$shape[[1]], c(16000L, 64000L))
  expect_identical(plan$axes[[1]], c(NA, "model"))
  expect_identical(plan$shard_shape[[1]], c(16000L, 16000L))
  expect_identical(plan$copies, rep(2L, 4))
  expect_type(plan$device_bytes, "double")
  expect_identical(plan$rule, rep(c(".*dense.*kernel", ".*dense.*bias"), 2))
  unmatched <- fixture_plan("plan-errors")
  expect_identical(unmatched$rule[3], NA_character_)
  expect_match(unmatched$problem[1], "not divisible by 4", fixed = TRUE)
  expect_identical(attr(plan, "rules")$variables, c(2L, 2L))
  expect_identical(nrow(fixture_plan("plan-no-parameters")), 0L)
})
