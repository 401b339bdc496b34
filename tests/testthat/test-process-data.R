test_that("process_rows() gives each process its part of every batch", {
  expect_identical(process_rows(32, 16, process = 0, processes = 2),
                   c(1:8, 17:24))
  expect_identical(process_rows(32, 16, process = 1, processes = 2),
                   c(9:16, 25:32))
  expect_identical(process_rows(10, 4, process = 0, processes = 1), 1:10)
  expect_identical(process_rows(0, 4, process = 0, processes = 2),
                   integer())
})

test_that("process_rows() of all processes cover every row once", {
  for (p in c(1, 2, 4)) {
    rows <- unlist(lapply(seq_len(p) - 1, function(i) {
      process_rows(64, 16, process = i, processes = p)
    }))
    expect_setequal(rows, 1:64)
    expect_length(rows, 64)
  }
})

test_that("process_rows() splits a last partial batch evenly", {
  expect_identical(process_rows(20, 8, process = 1, processes = 2),
                   c(5:8, 13:16, 19:20))
  expect_warning(
    rows <- process_rows(21, 8, process = 0, processes = 2),
    class = "kerasmesh_warning_rows_dropped"
  )
  expect_identical(rows, c(1:4, 9:12, 17:18))
})

test_that("process_rows() checks its arguments", {
  expect_snapshot(error = TRUE, {
    process_rows(10, 3, process = 0, processes = 2)
    process_rows(10, 4, process = 2, processes = 2)
    process_rows(-1, 4, process = 0, processes = 1)
    process_rows(10, 3e9, process = 0, processes = 1)
    process_rows(3e9, 8, process = 0, processes = 1)
  })
})

test_that("process_data() on a process of its own feeds every row", {
  skip_if_no_keras()
  x <- matrix(as.numeric(1:40), 10)
  d <- process_data(x, x[, 1], batch_size = 4)
  expect_identical(d$batch_size, 4L)
  expect_identical(d$rows, 1:10)
  expect_identical(unlist(reticulate::py_to_r(d$x$shape)), c(10L, 4L))
  expect_identical(unlist(reticulate::py_to_r(d$y$shape)), 10L)
  local <- process_data(x[1:3, ], batch_size = 4, rows = NULL)
  expect_identical(unlist(reticulate::py_to_r(local$x$shape)), c(3L, 4L))
  expect_null(local$y)
  expect_error(process_data(x, x[1:3, ], batch_size = 4),
               class = "kerasmesh_error_argument")
  # No feature columns: rows of nothing, as asked.
  empty <- process_data(matrix(1, 8, 0), batch_size = 4)
  expect_identical(unlist(reticulate::py_to_r(empty$x$shape)), c(8L, 0L))
})

test_that("process_data() names the array that holds NA, at its own rows", {
  x <- matrix(1:40, 20)
  expect_error(process_data(x, c(1:9, NA, 11:20), batch_size = 4,
                            rows = 1:4),
               "`y` can't contain `NA`", class = "kerasmesh_error_array_na")
  err <- expect_error(process_data(x, c(1:9, NA, 11:20), batch_size = 4),
                      class = "kerasmesh_error_array_na")
  expect_match(conditionMessage(err), "position 10", fixed = TRUE)
})

test_that("a value the dtype can't hold is named in its array, at its place", {
  skip_if_no_keras()
  x <- matrix(as.numeric(1:40), 20) # 40 at row 20, column 2
  x[17, 1] <- 300
  err <- expect_error(process_data(x, batch_size = 4, rows = 13:20,
                                   dtype = "int8"),
                      class = "kerasmesh_error_array_range")
  expect_match(conditionMessage(err), "Can't store 300 (in `x` at position 17)",
               fixed = TRUE)
  y <- c(1:19, 1e6)
  err <- expect_error(process_data(x[, 2], y, batch_size = 4, rows = 20:17,
                                   dtype = "int16"),
                      class = "kerasmesh_error_array_range")
  expect_match(conditionMessage(err), "in `y` at position 20", fixed = TRUE)
  expect_error(process_data(letters, batch_size = 4), "`x` must be a numeric",
               class = "kerasmesh_error_array")
})

test_that("a last batch that does not split evenly is worded by its count", {
  expect_warning(process_rows(1, 2, process = 0, processes = 2),
                 "Its 1 row doesn't split evenly over 2 processes",
                 class = "kerasmesh_warning_rows_dropped")
  expect_warning(process_rows(3, 4, process = 0, processes = 2),
                 "Its 3 rows don't split evenly",
                 class = "kerasmesh_warning_rows_dropped")
})
