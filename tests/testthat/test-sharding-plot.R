test_that("each picture plots to a PNG and returns itself invisibly", {
  skip_if_no_keras()
  mesh <- book_mesh()
  pictures <- list(
    sharding_picture(mesh, axes = c(NA, "model"), shape = c(16000, 64000)),
    sharding_picture(mesh, axes = "model", shape = 64),
    sharding_picture(mesh, axes = c("data", NA, "model"), shape = c(4, 8, 32)),
    sharding_picture(mesh, axes = c("data", NA, NA, "model"),
                     shape = c(2, 3, 4, 8)),
    sharding_picture(mesh, axes = character(), shape = numeric())
  )
  for (p in pictures) {
    expect_plot_returns(p)
  }
})

test_that("plot() on a sharding report draws one variable", {
  skip_if_no_keras()
  model <- with_distribution(model_parallel(book_layout()), build_mlp())
  sharding <- variable_sharding(model)
  expect_s3_class(attr(sharding, "mesh"), "kerasmesh_device_mesh")
  expect_invisible(with_png(plot(sharding, path = "sequential/dense/kernel")))
  expect_identical(with_png(plot(sharding, "dense_1/bias")), sharding)
  picture <- sharding_picture(sharding, "dense/kernel")
  expect_identical(picture$source, "placed")
  expect_identical(picture$devices,
                   sharding_picture(model, "dense/kernel")$devices)
  # A row keeps the mesh; without it, passing one works.
  row <- sharding[sharding$path == "sequential/dense/bias", ]
  expect_identical(sharding_picture(row)$copies, 2L)
  attr(row, "mesh") <- NULL
  row <- as_made(row)
  expect_error(sharding_picture(row), class = "kerasmesh_error_device_mesh")
  expect_identical(sharding_picture(row, mesh = book_mesh())$copies, 2L)
})

test_that("pictures plot from their descriptions alone, without Python", {
  for (name in c("picture-book-kernel", "picture-3d")) {
    expect_plot_returns(fixture_picture(name))
  }
})

test_that("each kind of sharding picture draws", {
  expect_pictures(
    "picture of the book kernel" = fixture_picture(),
    "picture of a 3-D tensor" = fixture_picture("picture-3d"),
    "picture of a 4-D tensor" = fixture_picture("picture-4d"),
    "picture of a scalar" = fixture_picture("picture-scalar"),
    "picture of a replicated matrix" = fixture_picture("picture-replicated"),
    "picture of a wide matrix" = fixture_picture("picture-wide"),
    "picture of a planned bias" = fixture_picture("picture-plan-bias")
  )
  expect_picture("picture of a 1-D tensor", function() {
    plot(fixture_picture("picture-1d"), main = "A bias")
  })
})
