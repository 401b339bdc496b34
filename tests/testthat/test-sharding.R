test_that("a (NA, 'model') kernel on 2 x 4 holds a quarter per device", {
  skip_if_no_keras()
  model <- with_distribution(model_parallel(book_layout()), {
    train_mlp(build_mlp(), mlp_data(), epochs = 1L)
  })
  sharding <- variable_sharding(model)
  expect_s3_class(sharding, "kerasmesh_sharding")
  kernel <- sharding[sharding$path == "sequential/dense/kernel", ]
  expect_identical(kernel$shape[[1]], c(32L, 64L))
  expect_identical(kernel$axes[[1]], c(NA, "model"))
  expect_identical(kernel$shard_shape[[1]], c(32L, 16L))
  expect_identical(kernel$copies, 2L)
  expect_identical(kernel$bytes, 32 * 64 * 4)
  expect_identical(kernel$device_bytes, kernel$bytes / 4)
})

test_that("the optimizer's slots are sharded like their variables", {
  skip_if_no_keras()
  model <- with_distribution(model_parallel(book_layout()), {
    train_mlp(build_mlp(), mlp_data(), epochs = 1L)
  })
  sharding <- variable_sharding(model)
  slots <- sharding[grepl("sequential_dense_kernel_(momentum|velocity)$",
                          sharding$path), ]
  expect_identical(nrow(slots), 2L)
  expect_identical(unique(slots$source), "optimizer")
  expect_identical(slots$axes, rep(list(c(NA, "model")), 2))
  expect_identical(slots$device_bytes, rep(32 * 64 * 4 / 4, 2))
})

test_that("per-device totals come from the placed shards", {
  skip_if_no_keras()
  model <- with_distribution(model_parallel(book_layout()), build_mlp())
  sharding <- variable_sharding(model)
  per_device <- attr(sharding, "per_device")
  expect_identical(per_device$device, paste0("cpu:", 0:7))
  expect_identical(per_device$bytes[1], sum(sharding$device_bytes))
})

test_that("a sharding report prints within 80 columns", {
  skip_if_no_keras()
  model <- with_distribution(model_parallel(book_layout()), {
    train_mlp(build_mlp(), mlp_data(), epochs = 1L)
  })
  sharding <- variable_sharding(model)
  lines <- format(sharding, width = 80)
  expect_true(all(nchar(lines) <= 80))
  expect_snapshot(print(sharding))
})

test_that("variable_sharding() rejects what is not a model, in R", {
  expect_error(variable_sharding("model"), class = "kerasmesh_error_model")
  expect_error(variable_sharding(NULL), class = "kerasmesh_error_model")
})

test_that("a sharding report prints from its saved description", {
  sharding <- fixture_sharding()
  expect_s3_class(sharding, c("kerasmesh_sharding", "data.frame"))
  # Paths shrink to 12 characters at least: from 61 columns.
  for (width in c(61, 72, 80)) {
    expect_lte(max(nchar(format(sharding, width = width))), width,
               label = width)
  }
  expect_snapshot({
    print(sharding, width = 80)
    print(sharding[1:2, ], width = 60)
  })
  # Every row, reordered, keeps the bytes per device; fewer rows don't.
  expect_match(format(sharding[rev(seq_len(nrow(sharding))), ]),
               "Per device", all = FALSE)
  expect_no_match(format(sharding[1:2, ]), "Per device", all = TRUE)
  expect_error(sharding[c(1, 1), ], "twice", class = "kerasmesh_error_argument")
  expect_error(sharding[99, ], "not there", class = "kerasmesh_error_argument")
  expect_identical(sharding[, "path"], sharding$path)
})

test_that("a sharding report holds shards, copies and bytes per device", {
  sharding <- fixture_sharding()
  kernel <- sharding[sharding$path == "sequential/dense/kernel", ]
  expect_identical(kernel$axes[[1]], c(NA, "model"))
  expect_identical(kernel$shard_shape[[1]], c(32L, 16L))
  expect_identical(kernel$copies, 2L)
  expect_identical(kernel$device_bytes, 32 * 16 * 4)
  expect_setequal(sharding$source, c("model", "optimizer"))
  per_device <- attr(sharding, "per_device")
  expect_identical(nrow(per_device), 8L)
  expect_equal(per_device$bytes[[1]], sum(sharding$device_bytes))
  expect_identical(mesh_shape(attr(sharding, "mesh")),
                   c(data = 2L, model = 4L))
})

test_that("an empty sharding report prints its header only", {
  empty <- fixture_sharding()[0, ]
  class(empty) <- c("kerasmesh_sharding", "data.frame")
  expect_identical(format(empty), "<kerasmesh_sharding> 0 variables")
})

test_that("the bytes per device agree with their count of devices", {
  one <- data.frame(device = "cpu:0", bytes = 272)
  expect_identical(kerasmesh:::summarize_device_bytes(one),
                   "272 B on its 1 device")
  two <- data.frame(device = c("cpu:0", "cpu:1"), bytes = c(8, 16))
  expect_identical(kerasmesh:::summarize_device_bytes(two),
                   "8 B to 16 B on each of 2 devices")
})
