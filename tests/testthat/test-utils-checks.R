test_that("check_whole() returns integers within its range", {
  expect_identical(check_whole(3), 3L)
  expect_identical(check_whole(0, min = 0), 0L)
  expect_identical(check_whole(.Machine$integer.max), .Machine$integer.max)
  expect_identical(check_whole(8, max = 8), 8L)
})

test_that("check_whole() refuses what an integer or the use can't hold", {
  for (bad in list(3e9, .Machine$integer.max + 1, 2.5, NA, Inf, "3", 1:2,
                   NULL, TRUE, 0, -1)) {
    expect_error(check_whole(bad), class = "kerasmesh_error_argument")
  }
  expect_error(check_whole(-1, min = 0), class = "kerasmesh_error_argument")
  expect_error(check_whole(9, max = 8), class = "kerasmesh_error_argument")
  n <- 3e9
  expect_snapshot(check_whole(n), error = TRUE)
  expect_snapshot(check_whole(n, min = 0, max = 10), error = TRUE)
  offset <- -2
  expect_snapshot(check_whole(offset, min = 0), error = TRUE)
})

test_that("check_choice() takes the first default or one of the choices", {
  expect_identical(check_choice(c("a", "b"), c("a", "b")), "a")
  expect_identical(check_choice("b", c("a", "b")), "b")
  for (bad in list("c", c("a", "b", "c"), NA_character_, 1, NULL)) {
    expect_error(check_choice(bad, c("a", "b")),
                 class = "kerasmesh_error_argument")
  }
})
