test_that("counts carry their noun, plural by cli", {
  expect_identical(kerasmesh:::count_text(1, "rule"), "1 rule")
  expect_identical(kerasmesh:::count_text(0, "rule"), "0 rules")
  expect_identical(kerasmesh:::count_text(12345, "error"), "12,345 errors")
  expect_identical(kerasmesh:::count_text(2, "cpu device"), "2 cpu devices")
  expect_identical(kerasmesh:::count_text(1e6, "block", count = "1000000"),
                   "1000000 blocks")
})

test_that("a batch split is worded in ways, one way singular", {
  expect_identical(kerasmesh:::ways_text(1L), "1 way")
  expect_identical(kerasmesh:::ways_text(4L), "4 ways")
  expect_identical(kerasmesh:::ways_text(NULL), "? ways")
  expect_identical(kerasmesh:::ways_text(NA), "? ways")
})
