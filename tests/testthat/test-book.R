# Deep Learning with R (3rd ed.), section 18.2.2, as a keras3 user writes
# it: keras3's shape() (mirrored in keras3_shape()), keras3's tuple()
# (which is reticulate's), and `layout_map[key] <- tuple(...)` lines, on
# kerasmesh objects.

shape <- keras3_shape
tuple <- reticulate::tuple

# A functional model: its variable paths start with the layer names
# ("dense/kernel", "dense_1/kernel"), so the book's "dense.*kernel" matches
# them in full, as Keras matches rule keys.
book_model <- function() {
  keras <- keras()
  keras$utils$set_random_seed(3L)
  inputs <- keras$Input(shape = list(16L))
  hidden <- keras$layers$Dense(32L, activation = "relu",
                               name = "dense")(inputs)
  outputs <- keras$layers$Dense(8L, name = "dense_1")(hidden)
  model <- keras$Model(inputs, outputs)
  model$compile(optimizer = "adam", loss = "mse")
  model
}

book_layout_map <- function() {
  mesh <- device_mesh(shape = shape(2, 4), axis_names = c("data", "model"))
  layout_map <- layout_map(mesh)
  layout_map["dense.*kernel"] <- tuple(NULL, "model")
  layout_map["dense.*bias"] <- tuple("model")
  layout_map
}

train_book_model <- function(distribution) {
  set.seed(5)
  x <- numpy_array(matrix(rnorm(64 * 16), 64))
  y <- numpy_array(matrix(rnorm(64 * 8), 64))
  with_distribution(distribution, {
    model <- book_model()
    model$fit(x, y, epochs = 1L, batch_size = 16L, verbose = 0L)
    model
  })
}

expect_book_sharding <- function(model) {
  sharding <- variable_sharding(model)
  expect_setequal(sharding$path[sharding$source == "model"],
                  c("dense/kernel", "dense/bias", "dense_1/kernel",
                    "dense_1/bias"))
  kernel <- sharding[sharding$path == "dense/kernel", ]
  expect_identical(kernel$axes[[1]], c(NA, "model"))
  expect_identical(kernel$spec, "PartitionSpec(None, 'model')")
  expect_identical(kernel$shard_shape[[1]], c(16L, 8L))
  bias <- sharding[sharding$path == "dense_1/bias", ]
  expect_identical(bias$axes[[1]], "model")
  # The placed array itself says so.
  spec <- model$get_layer("dense")$kernel$value$sharding$spec
  expect_identical(reticulate::import_builtins()$tuple(spec),
                   list(NULL, "model"))
}

test_that("the book's mesh: shape(2, 4) with axis names", {
  skip_if_no_keras()
  mesh <- device_mesh(shape = shape(2, 4), axis_names = c("data", "model"))
  expect_identical(mesh_shape(mesh), c(data = 2L, model = 4L))
  expect_s3_class(shape(2, 4), "keras_shape")
  expect_identical(unclass(shape(2, NA)), list(2L, NULL))
  expect_identical(mesh_shape(device_mesh(shape(2, NA), c("data", "model"))),
                   c(data = 2L, model = 4L))
})

test_that("the book's layout lines work on a kerasmesh layout map", {
  skip_if_no_keras()
  layout_map <- book_layout_map()
  expect_identical(as.list(layout_map), list(
    "dense.*kernel" = c(NA, "model"),
    "dense.*bias" = "model"
  ))
  # The rules match the model's paths in full, as Keras matches them.
  expect_identical(layout_map[["dense/kernel"]], c(NA, "model"))
  expect_identical(layout_map[["dense_1/kernel"]], c(NA, "model"))
  expect_identical(layout_map[["dense_1/bias"]], "model")
  paths <- vapply(book_model()$variables, function(v) v$path, "")
  for (path in paths) {
    expect_false(is.null(layout_map[[path]]), info = path)
  }
})

test_that("the book's model trains under model_parallel(), kernel split", {
  skip_if_no_keras()
  distribution <- model_parallel(book_layout_map(), batch_dim_name = "data")
  expect_book_sharding(train_book_model(distribution))
})

test_that("keras$distribution$ModelParallel() takes a kerasmesh layout map", {
  skip_if_no_keras()
  keras <- keras()
  distribution <- keras$distribution$ModelParallel(
    layout_map = book_layout_map(),
    batch_dim_name = "data"
  )
  expect_s3_class(
    distribution, "keras.src.distribution.distribution_lib.ModelParallel"
  )
  expect_book_sharding(train_book_model(distribution))
})
