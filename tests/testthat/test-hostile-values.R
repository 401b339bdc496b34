# Hostile values: each case must end with a classed error (or the intended
# result) promptly, never change data silently, never hang.

local_time_limit <- function(seconds = 30, frame = parent.frame()) {
  setTimeLimit(elapsed = seconds, transient = TRUE)
  withr::defer(setTimeLimit(elapsed = Inf), envir = frame)
}

test_that("NA in integer and logical arrays is refused, not made a number", {
  skip_if_no_keras()
  local_time_limit()
  # reticulate passes these as TRUE and -2147483648.
  expect_error(numpy_array(c(TRUE, NA, FALSE)),
               class = "kerasmesh_error_array_na")
  expect_error(numpy_array(c(1L, NA, 3L)), class = "kerasmesh_error_array_na")
  expect_error(numpy_array(c(1L, NA, 3L), dtype = "float64"),
               class = "kerasmesh_error_array_na")
  expect_error(numpy_array(array(NA, c(2, 2))),
               class = "kerasmesh_error_array_na")
  err <- expect_error(numpy_array(rep(NA_integer_, 1000)),
                      class = "kerasmesh_error_array_na")
  expect_match(conditionMessage(err), "1, 2, 3, 4, 5, and 995 more",
               fixed = TRUE)
  # The way out keeps NA as NaN.
  x <- numpy_array(as.double(c(1L, NA, 3L)))
  local_shim_export("arrays.as_lists", "arrays.values")
  values <- unlist(kerasmesh:::shim_call("arrays.as_lists", array = x)$values)
  expect_identical(is.nan(values), c(FALSE, TRUE, FALSE))
})

test_that("values a dtype can't hold are refused or warned about", {
  skip_if_no_keras()
  local_time_limit()
  expect_error(numpy_array(.Machine$integer.max, dtype = "int16"),
               class = "kerasmesh_error_array_range")
  expect_error(numpy_array(-1L, dtype = "uint8"),
               class = "kerasmesh_error_array_range")
  expect_error(numpy_array(2^63, dtype = "int64"),
               class = "kerasmesh_error_array_range")
  expect_error(numpy_array(c(0.5, NaN), dtype = "int32"),
               class = "kerasmesh_error_array_na")
  expect_error(numpy_array(Inf, dtype = "int32"),
               class = "kerasmesh_error_array_range")
  expect_error(numpy_array(-1e39), class = "kerasmesh_error_array_range")
  expect_warning(numpy_array(.Machine$integer.max),
                 class = "kerasmesh_warning_array_precision")
  # Infinity itself is a float32 value, not an overflow.
  expect_no_warning(numpy_array(c(Inf, -Inf)))
  expect_error(numpy_array(1, dtype = "no such dtype"),
               class = "kerasmesh_error_array")
  expect_error(numpy_array(1, dtype = NA_character_),
               class = "kerasmesh_error_argument")
})

test_that("array helpers given a non-model say what they received", {
  skip_if_no_keras()
  local_time_limit()
  keras <- keras()
  for (bad in list(42, "model", NULL, list(1), reticulate::dict(a = 1),
                   keras$layers$Dense)) {
    expect_error(variable_values(bad), class = "kerasmesh_error_model")
    expect_error(variable_sharding(bad), class = "kerasmesh_error_model")
  }
  err <- expect_error(variable_values(reticulate::dict(a = 1)),
                      class = "kerasmesh_error_model")
  expect_match(conditionMessage(err), "a named list", fixed = TRUE)
  expect_no_match(conditionMessage(err), "has no attribute")
})

test_that("axes in forms that are not axes get one classed error", {
  skip_if_no_keras()
  local_time_limit()
  mesh <- book_mesh()
  lm <- layout_map(mesh)
  keras <- keras()
  hostile <- list(
    reticulate::dict(model = 1), keras$Variable(reticulate::r_to_py(list(1))),
    keras$layers$Dense(2L), factor("model"), as.Date("2020-01-01"),
    list(NULL, list()), list(NULL, NA_character_, 1i), quote(model),
    function() NULL, 1:2, c(NA, "model", "model"), c("", "model"),
    reticulate::tuple(NULL, 3L), reticulate::tuple("data", "data")
  )
  for (axes in hostile) {
    expect_error(layout_map(mesh, k = axes),
                 class = "kerasmesh_error_layout_axes")
    expect_error(lm[["k"]] <- axes, class = "kerasmesh_error_layout_axes")
    expect_error(lm["k"] <- axes, class = "kerasmesh_error_layout_axes")
    expect_error(sharding_picture(mesh, axes = axes, shape = c(8, 8)),
                 class = "kerasmesh_error_layout_axes")
  }
  expect_identical(length(lm), 0L)
})

test_that("rule keys named like the formals of [ and [[ stay rule keys", {
  skip_if_no_keras()
  local_time_limit()
  mesh <- book_mesh()
  lm <- layout_map(mesh, m = "model")
  expect_s3_class(lm["m"], "kerasmesh_layout_map")
  expect_identical(names(lm["m"]), "m")
  for (key in c("m", "me", "mes", "mesh", "x", "i", "j", "value", "drop",
                "exact", "...")) {
    one <- layout_map(mesh)
    one[key] <- "model"
    one[[paste0(key, "2")]] <- c(NA, "model")
    expect_identical(names(one), c(key, paste0(key, "2")), info = key)
    expect_identical(names(one[key]), key, info = key)
    expect_identical(one[[key]], "model", info = key)
    rules <- stats::setNames(list("model"), key)
    expect_identical(names(do.call(layout_map, c(list(mesh), rules))), key,
                     info = key)
  }
})

test_that("R values that are not axes are refused by layout_map() in R", {
  mesh <- fixture_mesh()
  hostile <- list(
    factor = factor("model"), date = as.Date("2020-01-01"),
    complex_entry = list(NULL, NA, 1i),
    symbol = quote(model), fun = function() NULL, integers = 1:2,
    number = 3, nested_number = list(NULL, 3), matrix_of_numbers = matrix(1)
  )
  for (what in names(hostile)) {
    err <- expect_error(layout_map(mesh, "dense.*kernel" = hostile[[what]]),
                        class = "kerasmesh_error_layout_axes", info = what)
    expect_match(conditionMessage(err), 'The layout for "dense.*kernel"',
                 fixed = TRUE, info = what)
  }
})
