# Values on their way to and from the shim.

test_that("na_to_null() gives a list with NULL where R has NA", {
  expect_identical(na_to_null(c("data", NA)), list("data", NULL))
  expect_identical(na_to_null(character()), list())
})

test_that("whole_numbers() gives integers, or doubles beyond R's integers", {
  expect_identical(whole_numbers(list(2, 4L)), c(2L, 4L))
  big <- whole_numbers(list(15332469805107))
  expect_type(big, "double")
  expect_identical(big, 15332469805107)
})
