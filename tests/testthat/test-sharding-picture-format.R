# The console picture is pure R: built from saved descriptions.

test_that("the book kernel and a 3-D tensor print as box grids", {
  expect_snapshot(print(fixture_picture()))
  expect_snapshot(print(fixture_picture("picture-3d")))
})

test_that("pictures fit the console width they are given", {
  # From 60 columns: below that, the line naming the panels' dimension of a
  # 3-D picture is not wrapped yet.
  for (name in c("picture-book-kernel", "picture-3d")) {
    picture <- fixture_picture(name)
    for (width in c(60, 72, 80, 100, 120)) {
      lines <- format(picture, width = width)
      expect_true(all(nchar(lines) <= width),
                  label = paste(name, "at", width))
    }
  }
})
