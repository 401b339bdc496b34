test_that("the book kernel on 2 x 4 is 4 column shards, each on 2 devices", {
  skip_if_no_keras()
  kernel <- sharding_picture(book_mesh(), axes = c(NA, "model"),
                             shape = c(16000, 64000))
  expect_s3_class(kernel, "kerasmesh_sharding_picture")
  expect_identical(kernel$source, "planned")
  expect_identical(kernel$shard_shape, c(16000L, 16000L))
  expect_identical(kernel$copies, 2L)
  expect_identical(kernel$start[, 2], c(0, 16000, 32000, 48000))
  expect_identical(kernel$stop[, 1], rep(16000, 4))
  expect_identical(kernel$devices, list(c("cpu:0", "cpu:4"),
                                        c("cpu:1", "cpu:5"),
                                        c("cpu:2", "cpu:6"),
                                        c("cpu:3", "cpu:7")))
  expect_identical(kernel$device_bytes, 16000 * 16000 * 4)
})

test_that("the book kernel prints as an aligned box grid", {
  skip_if_no_keras()
  kernel <- sharding_picture(book_mesh(), axes = c(NA, "model"),
                             shape = c(16000, 64000),
                             path = "sequential/dense/kernel")
  expect_true(all(nchar(format(kernel, width = 80)) <= 80))
  expect_snapshot(print(kernel))
})

test_that("3-D and 4-D tensors become panels along their leading dimensions", {
  skip_if_no_keras()
  mesh <- book_mesh()
  cube <- sharding_picture(mesh, axes = c("data", NA, "model"),
                           shape = c(4, 8, 32))
  panels <- picture_layout(cube)$panels
  expect_length(panels, 2)
  expect_identical(panels[[2]]$label, "[3:4, , ]")
  expect_identical(panels[[2]]$cells, matrix(5:8, 1))
  expect_snapshot(print(cube))
  four <- sharding_picture(mesh, axes = c("data", NA, NA, "model"),
                           shape = c(2, 3, 4, 8))
  expect_snapshot(print(four))
  # Leading dimensions that are not split give one panel.
  one <- sharding_picture(mesh, axes = c(NA, "data", "model"),
                          shape = c(3, 4, 8))
  expect_length(picture_layout(one)$panels, 1)
})

test_that("1-D tensors and scalars print as one row", {
  skip_if_no_keras()
  mesh <- book_mesh()
  expect_snapshot({
    print(sharding_picture(mesh, axes = "model", shape = 8000,
                           path = "sequential/dense_1/bias"))
    print(sharding_picture(mesh, axes = NA, shape = 64))
    print(sharding_picture(mesh, axes = character(), shape = numeric()))
  })
})

test_that("wide grids split into bands of columns that fit the width", {
  skip_if_no_keras()
  wide <- sharding_picture(device_mesh(c(model = 8)), axes = "model",
                           shape = 64000)
  lines <- format(wide, width = 60)
  expect_true(all(nchar(lines) <= 60))
  expect_snapshot(print(wide, width = 60))
})

test_that("a placed variable pictures the same as its plan", {
  skip_if_no_keras()
  model <- with_distribution(model_parallel(book_layout()), build_mlp())
  placed <- sharding_picture(model, "dense/kernel")
  expect_identical(placed$path, "sequential/dense/kernel")
  expect_identical(placed$source, "placed")
  planned <- sharding_picture(book_layout(), "sequential/dense/kernel",
                              shape = c(32, 64))
  for (field in c("shape", "axes", "shard_shape", "copies", "start", "stop",
                  "devices", "device_bytes")) {
    expect_identical(placed[[field]], planned[[field]], label = field)
  }
  plan <- layout_plan(model, book_layout())
  expect_identical(sharding_picture(plan, "dense/kernel")$devices,
                   placed$devices)
})

test_that("an unplaced variable is one shard on one device", {
  skip_if_no_keras()
  model <- build_mlp()
  picture <- sharding_picture(model, "sequential/dense_1/bias")
  expect_null(picture$mesh)
  expect_length(picture$devices, 1)
  expect_match(format(picture)[3], "No mesh: 1 device")
})

test_that("paths, layouts and shapes that can't be pictured are errors", {
  skip_if_no_keras()
  mesh <- book_mesh()
  expect_error(
    sharding_picture(mesh, axes = c(NA, "model"), shape = c(16, 6)),
    class = "kerasmesh_error_layout_divisibility"
  )
  expect_error(sharding_picture(mesh, axes = "shard", shape = 8),
               class = "kerasmesh_error_layout_axes")
  expect_error(sharding_picture(mesh, axes = c(NA, NA, "model"),
                                shape = c(8, 8)),
               class = "kerasmesh_error_layout_rank")
  expect_error(sharding_picture(mesh, axes = NA, shape = -1),
               class = "kerasmesh_error_shape")
  expect_error(sharding_picture(42), class = "kerasmesh_error_argument")
  plan <- layout_plan(build_mlp(), book_layout())
  expect_snapshot(error = TRUE, {
    sharding_picture(plan, "kernel")
    sharding_picture(plan, "dense/kernal")
    sharding_picture(plan)
    sharding_picture(build_mlp(), "dense/kernal")
  })
})

test_that("sharding_picture() refuses what it can't picture, in R", {
  plan <- fixture_plan()
  expect_error(sharding_picture(42), class = "kerasmesh_error_argument")
  expect_error(sharding_picture("dense/kernel"),
               class = "kerasmesh_error_argument")
  expect_error(sharding_picture(plan), class = "kerasmesh_error_variable_path")
  expect_error(sharding_picture(plan, "dense/kernal"),
               class = "kerasmesh_error_variable_path")
  expect_error(sharding_picture(plan, "kernel"),
               class = "kerasmesh_error_variable_path")
  expect_error(sharding_picture(plan, 1), class = "kerasmesh_error_argument")
  expect_error(sharding_picture(fixture_layout_map(), path = 1),
               class = "kerasmesh_error_argument")
  expect_error(sharding_picture(fixture_layout_map(), path = NA_character_),
               class = "kerasmesh_error_argument")
  expect_snapshot(error = TRUE, {
    sharding_picture(plan, "kernel")
    sharding_picture(plan, "dense/kernal")
    sharding_picture(plan)
    sharding_picture(list(path = "a"))
  })
})

test_that("sharding_picture() checks R arguments before Python starts", {
  mesh <- fixture_mesh()
  expect_error(sharding_picture(mesh, axes = 1, shape = c(4, 4)),
               class = "kerasmesh_error_layout_axes")
  expect_error(sharding_picture(mesh, axes = c(NA, "model"), shape = "a"),
               class = "kerasmesh_error_shape")
  for (shape in list(c(0, 8), c(4, Inf))) {
    expect_error(sharding_picture(mesh, axes = c(NA, "model"), shape = shape),
                 "`shape` must be positive whole numbers",
                 class = "kerasmesh_error_shape")
  }
  expect_error(sharding_picture(mesh, c(NA, "model"), c(4, 4), dtype = 1),
               class = "kerasmesh_error_argument")
  # A misspelt argument is named, not taken for a missing one.
  expect_error(sharding_picture(mesh, layout = c(NA, "model"), shape = 4:5),
               "layout = ", class = "kerasmesh_error_argument")
  expect_error(sharding_picture(fixture_plan(), "x", size = 4), "size = ",
               class = "kerasmesh_error_argument")
  expect_snapshot(error = TRUE, {
    sharding_picture(mesh, shape = c(4, 4))
    sharding_picture(mesh)
    sharding_picture(fixture_layout_map(), shape = c(4, 4))
  })
})

test_that("a sharding report's rows are pictured by path, with its mesh", {
  sharding <- fixture_sharding()
  expect_error(sharding_picture(sharding),
               class = "kerasmesh_error_variable_path")
  expect_error(sharding_picture(sharding, "bias"),
               class = "kerasmesh_error_variable_path")
  row <- sharding[sharding$path == "sequential/dense/bias", ]
  attr(row, "mesh") <- NULL
  row <- as_made(row)
  err <- expect_error(sharding_picture(row),
                      class = "kerasmesh_error_device_mesh")
  expect_match(conditionMessage(err), "sequential/dense/bias", fixed = TRUE)
})

test_that("a model without variables is pictured as having none", {
  skip_if_no_keras()
  keras <- keras()
  empty <- keras$Sequential(list(keras$Input(shape = list(4L)),
                                 keras$layers$Flatten()), name = "empty")
  report <- variable_sharding(empty)
  expect_equal(nrow(report), 0)
  expect_snapshot(error = TRUE, {
    sharding_picture(empty)
    plot(report)
  })
  expect_error(sharding_picture(empty, "dense/kernel"),
               "has no variables", class = "kerasmesh_error_variable_path")
  one <- keras$Sequential(list(keras$Input(shape = list(4L)),
                               keras$layers$Dense(2L, use_bias = FALSE,
                                                  name = "dense")),
                          name = "one")
  expect_identical(sharding_picture(one)$path, "one/dense/kernel")
})

test_that("a picture's path must be one string", {
  expect_error(sharding_picture(fixture_mesh(), axes = c(NA, "model"),
                                shape = c(16, 32), path = 42),
               class = "kerasmesh_error_argument")
})

test_that("a report's data frame is pictured on the mesh given", {
  skip_if_no_keras()
  model <- with_distribution(model_parallel(book_layout()), build_mlp())
  report <- variable_sharding(model)
  plain <- as.data.frame(report)
  expect_error(sharding_picture(plain, "dense/kernel"), "`mesh`",
               class = "kerasmesh_error_argument")
  picture <- sharding_picture(plain, "dense/kernel", mesh = book_mesh())
  expect_equal(picture$shard_shape,
               sharding_picture(report, "dense/kernel")$shard_shape)
  # Another mesh would draw other shards: not the one it was placed on.
  other <- device_mesh(c(data = 4, model = 2))
  expect_error(sharding_picture(report, "dense/kernel", mesh = other),
               "placed on", class = "kerasmesh_error_mesh_mismatch")
  expect_error(sharding_picture(data.frame(a = 1), mesh = book_mesh()),
               "x$path", fixed = TRUE, class = "kerasmesh_error_argument")
})
