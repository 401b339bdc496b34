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
  unbuilt <- keras()$Sequential(list(keras()$layers$Dense(2L)))
  expect_error(variable_values(unbuilt), "`model` must be built",
               class = "kerasmesh_error_model")
  expect_error(variable_sharding(unbuilt), "`model` must be built",
               class = "kerasmesh_error_model")
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

test_that("arrays go down column-major with R's dimensions", {
  sent <- shim_request("as_numpy", matrix(1:6, nrow = 2), "float32")
  expect_identical(sent$name, "arrays.as_array")
  expect_identical(sent$args, list(values = 1:6, shape = list(2L, 3L),
                                   dtype = "float32", arg = NULL,
                                   rows = NULL, n_rows = NULL))
  sent <- shim_request("as_numpy", c(TRUE, FALSE), "bool")
  expect_identical(sent$args[1:3], list(values = c(TRUE, FALSE),
                                        shape = list(2L), dtype = "bool"))
  cube <- array(as.numeric(1:24), c(2, 3, 4))
  expect_identical(shim_request("as_numpy", cube, "float32")$args[[2]],
                   list(2L, 3L, 4L))
  # Double NA goes down as it is (NaN in Python); integer NA is refused.
  expect_identical(shim_request("as_numpy", c(1, NA), "float32")$args[[1]],
                   c(1, NA))
  expect_no_error(check_no_na(c(1, NA)))
})

test_that("r_array() brings arrays back with their shape and type", {
  skip_if_no_keras()
  a <- array(as.double(1:24), c(2, 3, 4))
  expect_identical(r_array(numpy_array(a, "float64")), a)
  m <- matrix(c(1.5, -2, NaN, Inf), 2)
  expect_identical(r_array(numpy_array(m)), m)
  expect_identical(r_array(numpy_array(1:6, "int32")), 1:6)
  expect_identical(r_array(numpy_array(c(TRUE, FALSE), "bool")),
                   c(TRUE, FALSE))
  expect_identical(r_array(numpy_array(2.5)), 2.5)
  np <- reticulate::import("numpy", convert = FALSE)
  expect_identical(r_array(np$zeros(c(0L, 3L))), matrix(0, 0, 3))
  # Integers R's can't hold come as doubles.
  big <- np$array(list(3e9, 1), dtype = "int64")
  expect_identical(r_array(big), c(3e9, 1))
  # bfloat16 (a JAX dtype NumPy doesn't have) as doubles.
  expect_identical(r_array(numpy_array(c(0.5, 2), "bfloat16")), c(0.5, 2))
  # Several outputs: a list, named for a dictionary.
  both <- reticulate::dict(a = numpy_array(1:2), b = numpy_array(3))
  expect_identical(r_array(both), list(a = c(1, 2), b = 3))
})

test_that("r_array() gives predict()'s result as an R matrix", {
  skip_if_no_keras()
  model <- build_mlp()
  x <- matrix(seq(0, 1, length.out = 5 * 32), 5)
  pred <- model$predict(numpy_array(x), verbose = 0L)
  out <- r_array(pred)
  expect_true(is.matrix(out))
  expect_identical(dim(out), c(5L, 16L))
  # The model by hand: relu(x W1 + b1) W2 + b2.
  w <- variable_values(model)
  hidden <- pmax(sweep(x %*% w[[1]], 2, w[[2]], "+"), 0)
  expect_equal(out, sweep(hidden %*% w[[3]], 2, w[[4]], "+"),
               tolerance = 1e-5)
  # An R array (what reticulate >= 1.38 returns) is left as it is.
  expect_identical(r_array(out), out)
  expect_identical(r_array(list(out)), list(out))
})

test_that("r_array() refuses what is not an array", {
  expect_error(r_array("a"), class = "kerasmesh_error_array")
  expect_error(r_array(data.frame(a = 1)), class = "kerasmesh_error_array")
  skip_if_no_keras()
  expect_error(r_array(reticulate::r_to_py("a")),
               class = "kerasmesh_error_array")
  keras <- reticulate::import("keras", convert = FALSE)
  expect_error(r_array(keras), "`array` must be a NumPy array",
               class = "kerasmesh_error_array")
  np <- reticulate::import("numpy", convert = FALSE)
  strings <- reticulate::r_to_py(list(a = 1, b = np$array(c("x", "y"))))
  expect_error(r_array(strings), '`array[["b"]]` must hold numbers',
               fixed = TRUE, class = "kerasmesh_error_array")
})

test_that("numpy_array() takes dtypes of booleans, integers and floats", {
  skip_if_no_keras()
  for (dtype in c("datetime64", "complex64", "int4", "str", "object")) {
    expect_error(numpy_array(1, dtype = dtype),
                 sprintf("`dtype` must be a dtype of booleans.*\"%s\"",
                         dtype),
                 class = "kerasmesh_error_array")
  }
  for (dtype in c("bool", "int8", "uint16", "float16", "bfloat16")) {
    expect_identical(r_array(numpy_array(1, dtype = dtype)),
                     if (dtype == "bool") TRUE else if (
                       startsWith(dtype, "float") || dtype == "bfloat16"
                     ) 1 else 1L)
  }
})

test_that("an R array reticulate can't convert names numpy_array()", {
  err <- simpleError(paste(
    "Required version of NumPy not available: incompatible NumPy binary",
    "version 33554432 (expecting version 16777225)"
  ))
  expect_true(kerasmesh:::is_numpy_version_error(err))
  expect_snapshot(error = TRUE,
                  kerasmesh:::abort_array_conversion(err, call = NULL))
  skip_if_no_keras()
  model <- build_mlp()
  x <- matrix(0, 8, 32)
  y <- matrix(0, 8, 16)
  fit <- function() {
    with_kerasmesh_errors(model$fit(x, y, verbose = 0L, epochs = 1L))
  }
  if (utils::packageVersion("reticulate") >= "1.38") {
    expect_no_error(fit())
  } else {
    expect_error(fit(), class = "kerasmesh_error_array_conversion")
    expect_error(with_distribution(data_parallel(), fit()),
                 class = "kerasmesh_error_array_conversion")
  }
})

test_that("r_array() keeps NULL in a list, as process_data() leaves `y`", {
  expect_identical(r_array(list(x = 1:3, y = NULL)), list(x = 1:3, y = NULL))
})
