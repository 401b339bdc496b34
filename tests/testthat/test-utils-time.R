test_that("elapsed_seconds() counts wall time forwards", {
  first <- elapsed_seconds()
  Sys.sleep(0.05)
  expect_gte(elapsed_seconds() - first, 0.04)
})
