test_that("np_array() keeps R's dimensions and element order", {
  skip_if_no_keras()
  m <- matrix(1:6, nrow = 2)
  x <- np_array(m)
  expect_identical(x$shape, list(2L, 3L))
  back <- kerasmesh:::shim_call("arrays.as_lists", x)
  # Row-major values of the same matrix.
  expect_identical(as.numeric(unlist(back$values)), as.numeric(t(m)))
  expect_identical(back$dtype, "float32")
})

test_that("variable_values() returns R arrays named by path", {
  skip_if_no_keras()
  model <- build_mlp()
  values <- variable_values(model)
  expect_identical(names(values)[1], "sequential/dense/kernel")
  expect_identical(dim(values[[1]]), c(32L, 64L))
  expect_length(values[[2]], 64L)
})

test_that("np_array() rejects what is not numeric", {
  expect_error(np_array("a"), class = "kerasmesh_error_array")
})
