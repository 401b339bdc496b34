test_that("a search's picture: candidates, the budget line, the chosen point", {
  skip_if_not_installed("vdiffr")
  vdiffr::expect_doppelganger("search candidates",
                              function() plot(fixture_search()))
})

test_that("a search's picture marks start and takes a title", {
  found <- fixture_search()
  found$start <- list(memory = 5e9, traffic = 4e9)
  expect_equal(search_points(found)$label,
               c("found", "start", "data parallel"))
  found$budget <- NULL
  path <- withr::local_tempfile(fileext = ".png")
  grDevices::png(path)
  expect_identical(plot(found, main = "Mine"), found)
  grDevices::dev.off()
  expect_gt(file.size(path), 0)
})
