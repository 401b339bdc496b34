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

test_that("wide device grids wrap into bands of columns within the width", {
  grid <- array(sprintf("device:%02d", 0:31), c(1, 32),
                list(data = NULL, model = NULL))
  lines <- kerasmesh:::format_device_grid(grid, width = 60)
  expect_true(all(nchar(lines) <= 60))
  expect_gt(sum(lines == ""), 0)
  expect_true(all(sprintf("device:%02d", 0:31) %in%
                    unlist(strsplit(lines, " +"))))
  expect_identical(sum(startsWith(lines, "data[0]")), sum(lines == "") + 1L)
})
