test_that("numpy_array() keeps R's dimensions and element order", {
  skip_if_no_keras()
  m <- matrix(1:6, nrow = 2)
  x <- numpy_array(m)
  expect_true("numpy.ndarray" %in% class(x))
  expect_identical(reticulate::py_to_r(x$shape), list(2L, 3L))
  local_shim_export("arrays.as_lists", "arrays.values")
  back <- kerasmesh:::shim_call("arrays.as_lists", array = x)
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

test_that("numpy_array() rejects what is not numeric", {
  expect_error(numpy_array("a"), class = "kerasmesh_error_array")
})

test_that("numpy_array() stays a NumPy array, its attributes Python objects", {
  skip_if_no_keras()
  x <- numpy_array(matrix(1:6, nrow = 2))
  # Held unconverted: on reticulate >= 1.38 a converting handle would turn
  # x$T into an R matrix; here it stays a NumPy array on every version.
  expect_true("numpy.ndarray" %in% class(x$T))
  expect_true("python.builtin.tuple" %in% class(x$shape))
  expect_identical(reticulate::py_to_r(x$T$shape), list(3L, 2L))
  expect_true("numpy.ndarray" %in% class(numpy_array(1)))
})

test_that("numpy_array() keeps double NA and NaN as NaN", {
  skip_if_no_keras()
  x <- numpy_array(c(1, NA, NaN))
  local_shim_export("arrays.as_lists", "arrays.values")
  back <- kerasmesh:::shim_call("arrays.as_lists", array = x)
  expect_identical(is.nan(unlist(back$values)), c(FALSE, TRUE, TRUE))
})

test_that("numpy_array() refuses NA in integer and logical input", {
  err <- expect_error(numpy_array(c(1L, NA, 3L)),
                      class = "kerasmesh_error_array_na")
  expect_match(conditionMessage(err), "position 2", fixed = TRUE)
  expect_match(conditionMessage(err), "as.double(x)", fixed = TRUE)
  expect_error(numpy_array(c(TRUE, NA, FALSE)),
               class = "kerasmesh_error_array_na")
  expect_error(numpy_array(matrix(c(1L, NA), 1), dtype = "float64"),
               class = "kerasmesh_error_array_na")
  expect_snapshot(error = TRUE, {
    numpy_array(c(TRUE, NA, FALSE))
    numpy_array(c(NA, 2L, NA, NA, NA, NA, NA, 8L))
  })
})

test_that("numpy_array() refuses values the dtype can't hold", {
  skip_if_no_keras()
  expect_error(numpy_array(c(1L, 300L), dtype = "int8"),
               class = "kerasmesh_error_array_range")
  expect_error(numpy_array(1.5, dtype = "int32"),
               class = "kerasmesh_error_array_range")
  expect_error(numpy_array(c(1, NA), dtype = "int32"),
               class = "kerasmesh_error_array_na")
  expect_error(numpy_array(2, dtype = "bool"),
               class = "kerasmesh_error_array_range")
  expect_error(numpy_array(1e300), class = "kerasmesh_error_array_range")
  expect_snapshot(error = TRUE, numpy_array(c(1L, 300L), dtype = "int8"))
})

test_that("numpy_array() warns when float32 rounds whole numbers", {
  skip_if_no_keras()
  expect_warning(x <- numpy_array(c(1, 2^24 + 1)),
                 class = "kerasmesh_warning_array_precision")
  expect_true("numpy.ndarray" %in% class(x))
  expect_no_warning(numpy_array(c(2^24, 0.1, 2^30)))
  expect_no_warning(numpy_array(2^24 + 1, dtype = "float64"))
  expect_no_warning(numpy_array(.Machine$integer.max, dtype = "int32"))
  expect_snapshot(x <- numpy_array(16777217L))
})

test_that("variable_values() says what it received instead of a model", {
  skip_if_no_keras()
  expect_error(variable_values(42), class = "kerasmesh_error_model")
  err <- expect_error(variable_values(reticulate::dict(a = 1)),
                      class = "kerasmesh_error_model")
  expect_match(conditionMessage(err), "Received a named list", fixed = TRUE)
  expect_snapshot(error = TRUE, variable_values(42))
})

test_that("numpy_array() sends values column-major with R's dimensions", {
  sent <- shim_request("numpy_array", matrix(1:6, nrow = 2))
  expect_identical(sent$name, "arrays.as_array")
  expect_identical(sent$args, list(values = 1:6, shape = list(2L, 3L),
                                   dtype = "float32"))
  sent <- shim_request("numpy_array", c(TRUE, FALSE), dtype = "bool")
  expect_identical(sent$args, list(values = c(TRUE, FALSE),
                                   shape = list(2L), dtype = "bool"))
  cube <- array(as.numeric(1:24), c(2, 3, 4))
  expect_identical(shim_request("numpy_array", cube)$args[[2]],
                   list(2L, 3L, 4L))
  # Double NA goes down as it is (NaN in Python); integer NA is refused.
  expect_identical(shim_request("numpy_array", c(1, NA))$args[[1]], c(1, NA))
})
