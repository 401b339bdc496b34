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
  found <- as_made(found)
  path <- withr::local_tempfile(fileext = ".png")
  grDevices::png(path)
  expect_identical(plot(found, main = "Mine"), found)
  grDevices::dev.off()
  expect_gt(file.size(path), 0)
})

test_that("a search that costed one layout draws it", {
  skip_if_not_installed("vdiffr")
  found <- fixture_search()
  found$cost$xla[["total"]] <- 2e9
  found$cost$need <- 2e9
  found$cost$collectives$bytes <- 0 * found$cost$collectives$bytes
  found$candidates <- found$candidates[2, ]
  found$candidates$traffic <- 0
  found$data_parallel <- list(memory = 2e9, traffic = 0)
  found$budget <- NULL
  found <- as_made(found)
  expect_equal(kerasmesh:::search_labels(search_points(found))$label,
               "found = data parallel")
  vdiffr::expect_doppelganger("search one layout", function() plot(found))
})

test_that("a search with an infinite budget draws no budget line", {
  found <- fixture_search()
  found$budget <- Inf
  found <- as_made(found)
  path <- withr::local_tempfile(fileext = ".png")
  grDevices::png(path)
  on.exit(grDevices::dev.off(), add = TRUE)
  expect_identical(plot(found), found)
})

test_that("Inf is no budget; a string past a double's range is an error", {
  expect_error(kerasmesh:::check_search_memory("1e999GB"),
               "must be a positive, finite size",
               class = "kerasmesh_error_argument")
  expect_null(kerasmesh:::check_search_memory(Inf))
  expect_identical(kerasmesh:::check_search_memory("80GB"), 8e10)
})
