test_that("counts carry their noun, plural by cli", {
  expect_identical(kerasmesh:::count_text(1, "rule"), "1 rule")
  expect_identical(kerasmesh:::count_text(0, "rule"), "0 rules")
  expect_identical(kerasmesh:::count_text(12345, "error"), "12,345 errors")
  expect_identical(kerasmesh:::count_text(2, "cpu device"), "2 cpu devices")
  expect_identical(kerasmesh:::count_text(1e6, "block", count = "1000000"),
                   "1000000 blocks")
})

test_that("the article is the one the text is read with", {
  for (text in c("8 (model)", "11 x 2", "18", "80 (data)", "800", "a")) {
    expect_identical(kerasmesh:::a_or_an(text), "an", info = text)
  }
  for (text in c("2 x 4 (data x model)", "1 (data)", "110", "181", "16")) {
    expect_identical(kerasmesh:::a_or_an(text), "a", info = text)
  }
})

test_that("a batch split is worded in ways, one way singular", {
  expect_identical(kerasmesh:::ways_text(1L), "1 way")
  expect_identical(kerasmesh:::ways_text(4L), "4 ways")
  expect_identical(kerasmesh:::ways_text(NULL), "? ways")
  expect_identical(kerasmesh:::ways_text(NA), "? ways")
})

test_that("long names are truncated to a width", {
  expect_identical(kerasmesh:::truncate_right("abcdefghij", 8), "abcde...")
  expect_identical(kerasmesh:::truncate_right("abc", 8), "abc")
  long <- "adam/sequential/dense/kernel_momentum"
  short <- kerasmesh:::truncate_left(long, 24)
  expect_identical(nchar(short), 24L)
  expect_true(startsWith(short, "adam/..."))
  expect_true(endsWith(short, "kernel_momentum"))
})

test_that("dimensions are written in full, past R's integers too", {
  withr::local_options(cli.unicode = FALSE)
  expect_identical(format_dims(c(16, 1e12)), "16x1000000000000")
  expect_identical(format_dims(c(2L, 4L)), "2x4")
  expect_identical(format_dims(integer()), "()")
})
