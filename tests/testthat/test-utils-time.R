test_that("elapsed_seconds() is one number that never goes backwards", {
  first <- elapsed_seconds()
  expect_true(is.double(first) && length(first) == 1 && first >= 0)
  expect_gte(elapsed_seconds(), first)
})
