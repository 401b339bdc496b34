test_that("model_parallel() defaults the batch axis to the mesh's first", {
  skip_if_no_keras()
  dist <- model_parallel(book_layout())
  expect_s3_class(dist, "kerasmesh_model_parallel")
  expect_identical(dist$batch_dim_name, "data")
  py <- reticulate::r_to_py(dist)
  expect_s3_class(py, "keras.src.distribution.distribution_lib.ModelParallel")
  expect_identical(py$batch_dim_name, "data")
})

test_that("model_parallel() rejects a batch axis that is not in the mesh", {
  skip_if_no_keras()
  expect_error(model_parallel(book_layout(), batch_dim_name = "batch"),
               class = "kerasmesh_error_batch_dim_name")
  expect_snapshot(model_parallel(book_layout(), batch_dim_name = "batch"),
                  error = TRUE)
})

test_that("data_parallel() with both mesh and devices is an error", {
  skip_if_no_keras()
  expect_error(data_parallel(device_mesh(c(batch = 8)), devices = 4),
               class = "kerasmesh_error_distribution_argument")
})

test_that("data_parallel() works on a 2-D mesh instead of Keras's TypeError", {
  skip_if_no_keras()
  expect_warning(dist <- data_parallel(book_mesh()),
                 class = "kerasmesh_warning_mesh_rank")
  expect_s3_class(dist, "kerasmesh_data_parallel")
  expect_identical(dist$batch_dim_name, "data")
  expect_identical(reticulate::r_to_py(dist)$num_model_replicas, 2L)
  model <- suppressWarnings(with_distribution(dist, build_mlp()))
  sharding <- variable_sharding(model)
  expect_identical(sharding$copies[sharding$source == "model"], rep(8L, 4))
})

test_that("data_parallel() takes devices or all devices", {
  skip_if_no_keras()
  expect_identical(mesh_shape(data_parallel()$mesh), c(batch = 8L))
  expect_identical(mesh_shape(data_parallel(devices = 4)$mesh), c(batch = 4L))
})

test_that("distributions print their kind, mesh and rules", {
  skip_if_no_keras()
  expect_snapshot(print(model_parallel(book_layout())))
  expect_snapshot(print(data_parallel(devices = 4)))
})

test_that("set_distribution() sets, returns the previous one, and clears", {
  skip_if_no_keras()
  expect_null(get_distribution())
  dist <- data_parallel()
  expect_null(set_distribution(dist))
  expect_s3_class(get_distribution(), "kerasmesh_data_parallel")
  previous <- set_distribution(NULL)
  expect_s3_class(previous, "kerasmesh_data_parallel")
  expect_null(get_distribution())
  expect_error(set_distribution("dp"), class = "kerasmesh_error_distribution")
})

test_that("with_distribution() restores the previous one, even on error", {
  skip_if_no_keras()
  outer <- data_parallel(devices = 4)
  set_distribution(outer)
  on.exit(set_distribution(NULL))
  inner <- model_parallel(book_layout())
  inside <- with_distribution(inner, get_distribution()$type)
  expect_identical(inside, "model_parallel")
  expect_identical(get_distribution()$type, "data_parallel")
  expect_error(with_distribution(inner, stop("boom")), "boom")
  expect_identical(get_distribution()$type, "data_parallel")
  expect_error(with_distribution(inner, reticulate::py_eval("1/0")),
               class = "kerasmesh_error_python")
  expect_identical(mesh_shape(get_distribution()$mesh), c(batch = 4L))
})

test_that("local_distribution() lasts until the calling function exits", {
  skip_if_no_keras()
  f <- function(fail) {
    local_distribution(model_parallel(book_layout()))
    if (fail) stop("inner failure")
    get_distribution()$type
  }
  expect_identical(f(FALSE), "model_parallel")
  expect_null(get_distribution())
  expect_error(f(TRUE), "inner failure")
  expect_null(get_distribution())
})

test_that("a model built before the distribution is caught before training", {
  skip_if_no_keras()
  data <- mlp_data()
  model <- build_mlp()
  expect_error(
    with_distribution(model_parallel(book_layout()), train_mlp(model, data)),
    class = "kerasmesh_error_model_placement"
  )
  expect_snapshot(
    with_distribution(model_parallel(book_layout()), train_mlp(model, data)),
    error = TRUE
  )
  expect_null(get_distribution())
  # Outside any distribution the same model trains.
  expect_no_error(train_mlp(model, data, epochs = 1L))
})

test_that("model-parallel training on 2 x 4 equals single-device training", {
  skip_if_no_keras()
  data <- mlp_data()
  sharded <- with_distribution(model_parallel(book_layout()), {
    train_mlp(build_mlp(), data)
  })
  kernel <- variable_sharding(sharded)
  expect_identical(kernel$spec[1], "PartitionSpec(None, 'model')")
  reference <- train_mlp(build_mlp(), data)
  expect_identical(variable_sharding(reference)$copies[1], 1L)
  expect_lte(max_abs_diff(variable_values(sharded),
                          variable_values(reference)), 1e-5)
})

test_that("data-parallel training on 8 devices equals single-device training", {
  skip_if_no_keras()
  data <- mlp_data()
  replicated <- with_distribution(data_parallel(), {
    train_mlp(build_mlp(), data)
  })
  expect_identical(variable_sharding(replicated)$copies[1], 8L)
  reference <- train_mlp(build_mlp(), data)
  expect_lte(max_abs_diff(variable_values(replicated),
                          variable_values(reference)), 1e-5)
})

test_that("training under model_parallel() checks the batch size first", {
  skip_if_no_keras()
  data <- mlp_data(n = 30)
  expect_error(
    with_distribution(model_parallel(book_layout()), {
      model <- build_mlp()
      model$fit(data$x, data$y, batch_size = 15L, epochs = 1L, verbose = 0L)
    }),
    class = "kerasmesh_error_batch_size"
  )
  expect_null(get_distribution())
})

test_that("data_parallel() names a batch its axis can't split, before fit", {
  skip_if_no_keras()
  set.seed(3)
  xm <- matrix(rnorm(100 * 32), 100)
  ym <- matrix(rnorm(100 * 16), 100)
  x <- numpy_array(xm)
  y <- numpy_array(ym)
  local_distribution(data_parallel())
  model <- build_mlp()
  before <- variable_values(model)
  fit <- function(...) model$fit(x, y, epochs = 1L, verbose = 0L, ...)
  expect_snapshot(error = TRUE, {
    with_kerasmesh_errors(fit(batch_size = 16L))
    with_kerasmesh_errors(fit(batch_size = 10L))
    with_kerasmesh_errors(fit(batch_size = 16L, validation_split = 0.2))
  })
  for (batch_size in c(16L, 10L, 3L, 20L)) {
    expect_error(with_kerasmesh_errors(fit(batch_size = batch_size)),
                 class = "kerasmesh_error_batch_size")
  }
  expect_error(
    with_kerasmesh_errors(fit(batch_size = 16L,
                              validation_data = list(x, y))),
    class = "kerasmesh_error_batch_size"
  )
  expect_error(with_kerasmesh_errors(model$evaluate(x, y, verbose = 0L)),
               class = "kerasmesh_error_batch_size")
  expect_error(with_kerasmesh_errors(model$predict(x, verbose = 0L)),
               class = "kerasmesh_error_batch_size")
  # Nothing ran.
  expect_identical(variable_values(model), before)
  # 96 rows split evenly in batches of 16, validated on 16 more.
  x96 <- numpy_array(xm[1:96, ])
  y96 <- numpy_array(ym[1:96, ])
  model$fit(x96, y96, batch_size = 16L, epochs = 1L, verbose = 0L,
            validation_data = list(numpy_array(xm[1:16, ]),
                                   numpy_array(ym[1:16, ])))
  expect_identical(dim(r_array(model$predict(x96, batch_size = 16L,
                                             verbose = 0L))),
                   c(96L, 16L))
})

test_that("options(kerasmesh.check_layout) is TRUE or FALSE", {
  skip_if_no_keras()
  withr::local_options(kerasmesh.check_layout = "maybe")
  expect_error(with_distribution(model_parallel(book_layout()), NULL),
               '`getOption("kerasmesh.check_layout")` must be TRUE or FALSE',
               fixed = TRUE, class = "kerasmesh_error_argument")
  expect_null(get_distribution())
})

test_that("options(kerasmesh.check_layout = FALSE) turns the check off", {
  skip_if_no_keras()
  withr::local_options(kerasmesh.check_layout = FALSE)
  data <- mlp_data(n = 30)
  # Keras itself then fails, later and without naming the batch axis.
  err <- expect_error(
    with_distribution(model_parallel(book_layout()), {
      model <- build_mlp()
      model$fit(data$x, data$y, batch_size = 15L, epochs = 1L, verbose = 0L)
    }),
    class = "kerasmesh_error_python"
  )
  expect_false(inherits(err, "kerasmesh_error_batch_size"))
  local_shim_export("distribution.set_auto_check", "train.guard")
  expect_false(kerasmesh:::shim_call("distribution.set_auto_check",
                                     enabled = TRUE))
})

test_that("distributions print their kind, mesh and rules from descriptions", {
  expect_snapshot({
    print(fixture_distribution("distribution-data-parallel"))
    print(fixture_distribution("distribution-data-parallel-fed"))
    print(fixture_distribution("distribution-model-parallel"))
    print(fixture_distribution("distribution-model-parallel-empty"))
  })
})

test_that("a distribution's description keeps its mesh and layout map", {
  dp <- fixture_distribution("distribution-data-parallel")
  expect_s3_class(dp, c("kerasmesh_data_parallel", "kerasmesh_distribution",
                        "kerasmesh_object"))
  expect_null(dp$layout_map)
  expect_identical(mesh_shape(dp$mesh), c(batch = 8L))
  mp <- fixture_distribution()
  expect_s3_class(mp, "kerasmesh_model_parallel")
  expect_identical(mp$batch_dim_name, "data")
  expect_identical(names(mp$layout_map), c(".*dense.*kernel", ".*dense.*bias"))
  expect_true(all(nchar(format(mp)) <= 80))
})

test_that("distribution functions refuse wrong R types before Python", {
  lm <- fixture_layout_map()
  expect_error(data_parallel(auto_shard_dataset = NA),
               class = "kerasmesh_error_argument")
  expect_error(data_parallel(mesh = "mesh"),
               class = "kerasmesh_error_device_mesh")
  expect_error(model_parallel("lm"), class = "kerasmesh_error_layout_map")
  expect_error(model_parallel(fixture_mesh()),
               class = "kerasmesh_error_layout_map")
  expect_error(model_parallel(lm, batch_dim_name = 1),
               class = "kerasmesh_error_argument")
  expect_error(model_parallel(lm, batch_dim_name = ""),
               class = "kerasmesh_error_argument")
  expect_error(model_parallel(lm, auto_shard_dataset = "yes"),
               class = "kerasmesh_error_argument")
  expect_snapshot(error = TRUE, {
    data_parallel(auto_shard_dataset = "no")
    model_parallel(list(".*" = "model"))
  })
})

test_that("the distribution constructors send plain values", {
  sent <- shim_request("data_parallel", devices = c("cpu:0", "cpu:1"))
  expect_identical(sent$name, "distribution.data_parallel")
  expect_identical(sent$args, list(mesh = NULL,
                                   devices = list("cpu:0", "cpu:1"),
                                   auto_shard_dataset = TRUE))
  sent <- shim_request("data_parallel", devices = 4,
                       auto_shard_dataset = FALSE)
  expect_identical(sent$args, list(mesh = NULL, devices = 4,
                                   auto_shard_dataset = FALSE))
  sent <- shim_request("model_parallel", fixture_layout_map(), "data", FALSE)
  expect_identical(sent$name, "distribution.model_parallel")
  expect_identical(sent$args, list(layout_map = NULL, batch_dim_name = "data",
                                   auto_shard_dataset = FALSE))
})

test_that("a mesh of two axes is said to split the batch over its first", {
  # Once the distribution is made: not before an error refusing it.
  made <- with_shim("data_parallel", function(name, ..., call = NULL) {
    fixture("distribution-data-parallel")
  })
  expect_warning(made(mesh = fixture_mesh()),
                 class = "kerasmesh_warning_mesh_rank")
  expect_no_warning(made(mesh = fixture_mesh("mesh-1d")))
  refused <- with_shim("data_parallel", function(name, ..., call = NULL) {
    rlang::abort("both", class = "kerasmesh_error_distribution_argument")
  })
  expect_no_warning(expect_error(
    refused(mesh = fixture_mesh(), devices = c("cpu:0", "cpu:1")),
    class = "kerasmesh_error_distribution_argument"
  ))
})

test_that("NULL is offered only where a distribution may be NULL", {
  lm <- fixture_layout_map()
  err <- expect_error(kerasmesh:::check_distribution(lm, allow_null = FALSE),
                      class = "kerasmesh_error_distribution")
  expect_match(conditionMessage(err), "must be a distribution.",
               fixed = TRUE)
  expect_error(kerasmesh:::check_distribution(lm), "or `NULL`",
               class = "kerasmesh_error_distribution")
})

test_that("local_distribution() checks its frame before setting anything", {
  expect_error(local_distribution(fixture_distribution(), .local_envir = 3),
               "`.local_envir`", class = "kerasmesh_error_argument")
})
