# inst/examples/readme.R is the R block of README.md, character for
# character (tests/python/test_readme.py checks that they agree).

test_that("the README's example splits the kernel over the model axis", {
  skip_if_no_keras()
  path <- system.file("examples", "readme.R", package = "kerasmesh")
  expect_true(nzchar(path))
  env <- new.env()
  utils::capture.output(source(path, local = env, encoding = "UTF-8"))
  sharding <- variable_sharding(env$model)
  kernel <- sharding[sharding$path == "sequential/dense/kernel", ]
  # 2 x 4 mesh, kernel split 4 ways over "model": 2 copies, not 8.
  expect_identical(kernel$axes[[1]], c(NA, "model"))
  expect_identical(kernel$copies, 2L)
  expect_equal(kernel$device_bytes, kernel$bytes / 4)
  bias <- sharding[sharding$path == "sequential/dense/bias", ]
  expect_identical(bias$copies, 2L)
  expect_null(get_distribution())
})
