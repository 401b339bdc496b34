test_that("picture layouts put the last two dimensions in each panel", {
  layout <- picture_layout(fixture_picture("picture-4d"))
  expect_identical(layout$rows, 3L)
  expect_identical(layout$cols, 4L)
  expect_length(layout$panels, 2)
  expect_identical(layout$panels[[1]]$label, "[1, 1:3, , ]")
  expect_identical(layout$panels[[2]]$col_labels,
                   c("1:2", "3:4", "5:6", "7:8"))
  expect_identical(dim(layout$panels[[1]]$cells), c(1L, 4L))
  one <- picture_layout(fixture_picture("picture-1d"))
  expect_length(one$panels, 1)
  expect_identical(one$panels[[1]]$row_labels, "")
  expect_identical(one$panels[[1]]$col_sizes, rep(16, 4))
  scalar <- picture_layout(fixture_picture("picture-scalar"))
  expect_identical(scalar$panels[[1]]$cells, matrix(1L, 1, 1))
})

test_that("titles name the path, the shape or a scalar", {
  title <- picture_title
  expect_identical(title(fixture_picture("picture-plan-bias")),
                   "sequential/dense/bias")
  expect_identical(title(fixture_picture("picture-scalar")), "A scalar")
  expect_match(title(fixture_picture("picture-3d")), "^Tensor of shape 4.8.32$")
  expect_identical(index_range(c(0, 15999), c(16000, 16000)),
                   c("1:16000", "16000"))
  expect_identical(format_count(c(1e12, 8)), c("1000000000000", "8"))
})
