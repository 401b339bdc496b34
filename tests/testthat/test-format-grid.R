# The console grid renderer is pure R: no Python needed.

test_that("a 2-D device grid prints rows by columns with axis labels", {
  grid <- array(paste0("cpu:", 0:7), c(2, 4),
                list(data = NULL, model = NULL))
  lines <- kerasmesh:::format_device_grid(grid, width = 80)
  expect_identical(lines[[1]],
                   "         model[0] model[1] model[2] model[3]")
  expect_identical(lines[[2]], "data[0]  cpu:0    cpu:2    cpu:4    cpu:6")
  expect_length(lines, 3)
})

test_that("a 1-D grid is one row; a 3-D grid is one slice per index", {
  one <- array(paste0("cpu:", 0:3), 4, list(data = NULL))
  expect_length(kerasmesh:::format_device_grid(one), 2)
  three <- array(paste0("cpu:", 0:7), c(2, 2, 2),
                 list(stage = NULL, data = NULL, model = NULL))
  lines <- kerasmesh:::format_device_grid(three)
  expect_identical(sum(grepl("^, , model\\[", lines)), 2L)
})

test_that("wide grids wrap into blocks of columns that fit the width", {
  cells <- matrix(sprintf("device:%02d", 0:31), nrow = 1)
  lines <- kerasmesh:::format_grid(cells, "row", paste0("c", 0:31),
                                   width = 60)
  expect_true(all(nchar(lines) <= 60))
  expect_gt(sum(lines == ""), 0)
  expect_true(all(sprintf("device:%02d", 0:31) %in%
                    unlist(strsplit(lines, " +"))))
})

test_that("columns split greedily, never leaving one empty", {
  expect_identical(kerasmesh:::split_columns(c(5, 5, 5), 11),
                   list(1:2, 3L))
  expect_identical(kerasmesh:::split_columns(c(20, 5), 10), list(1L, 2L))
  expect_identical(kerasmesh:::split_columns(integer(), 10), list(integer()))
})

test_that("text pads and truncates to a width", {
  expect_identical(kerasmesh:::pad_right(c("a", "abc"), 3), c("a  ", "abc"))
  expect_identical(kerasmesh:::pad_right("abcd", 2), "abcd")
  expect_identical(kerasmesh:::truncate_right("abcdefghij", 8), "abcde...")
  expect_identical(kerasmesh:::truncate_right("abc", 8), "abc")
  long <- "adam/sequential/dense/kernel_momentum"
  short <- kerasmesh:::truncate_left(long, 24)
  expect_identical(nchar(short), 24L)
  expect_true(startsWith(short, "adam/..."))
  expect_true(endsWith(short, "kernel_momentum"))
})
