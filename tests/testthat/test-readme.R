# inst/examples/readme.R is the R block of README.md, character for
# character (tests/python/test_readme.py checks that they agree).

test_that("the README's example splits the kernel over the model axis", {
  skip_if_no_keras()
  path <- system.file("examples", "readme.R", package = "kerasmesh")
  expect_true(nzchar(path))
  env <- new.env()
  utils::capture.output(source(path, local = env, encoding = "UTF-8"))
  sharding <- variable_sharding(env$model)
  # "sequential/dense/kernel", or "sequential_3/..." after other models.
  kernel <- sharding[grepl("^sequential[_0-9]*/dense/kernel$",
                           sharding$path), ]
  expect_identical(nrow(kernel), 1L)
  # 2 x 4 mesh, kernel split 4 ways over "model": 2 copies, not 8.
  expect_identical(kernel$axes[[1]], c(NA, "model"))
  expect_identical(kernel$copies, 2L)
  expect_equal(kernel$device_bytes, kernel$bytes / 4)
  bias <- sharding[grepl("^sequential[_0-9]*/dense/bias$", sharding$path), ]
  expect_identical(bias$copies, 2L)
  expect_null(get_distribution())
})
