test_that("accumulation_steps must be a whole number that divides the batch", {
  expect_snapshot(error = TRUE, {
    check_accumulation_steps(0, 16)
    check_accumulation_steps(2.5, 16)
    check_accumulation_steps("2", 16)
    check_accumulation_steps(3, 16)
    check_accumulation_steps(7, 360)
  })
  expect_error(check_accumulation_steps(3, 16),
               class = "kerasmesh_error_accumulation_steps")
  expect_identical(check_accumulation_steps(4, 16), 4L)
  expect_identical(whole_divisors(12), c(1, 2, 3, 4, 6, 12))
  expect_identical(whole_divisors(1), 1)
})

test_that("the levers are checked before Python starts", {
  expect_identical(check_cost_levers(NULL, 1, 16, NULL),
                   list(remat = NULL, accumulation_steps = 1L))
  expect_identical(check_cost_levers("full", 8, 16, NULL),
                   list(remat = "full", accumulation_steps = 8L))
  expect_error(check_cost_levers("dots", 1, 16, NULL),
               class = "kerasmesh_error_remat")
  expect_error(check_cost_levers(NULL, 5, 16, NULL),
               class = "kerasmesh_error_accumulation_steps")
})
