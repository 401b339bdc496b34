# The picture toolkit is pure R: these tests run without Python.

test_that("sequential fills darken in order; one fill for one column", {
  expect_length(kerasmesh:::seq_fills(1), 1)
  fills <- kerasmesh:::seq_fills(5)
  lightness <- colSums(grDevices::col2rgb(fills))
  expect_identical(order(lightness, decreasing = TRUE), 1:5)
})

test_that("group fills are distinct, neighbours differ in lightness", {
  fills <- kerasmesh:::group_fills(7)
  expect_length(unique(fills), 7)
  lightness <- colSums(grDevices::col2rgb(fills))
  expect_true(all(diff(lightness) != 0))
})

test_that("text sizes grow with the font size; fitted sizes fit", {
  with_png({
    small <- kerasmesh:::text_size(c("cpu:0", "cpu:0 cpu:1"), 8)
    big <- kerasmesh:::text_size(c("cpu:0", "cpu:0 cpu:1"), 16)
    expect_identical(dim(small), c(2L, 2L))
    expect_true(all(big > small))
    fs <- kerasmesh:::fitted_fontsize("cpu:0 cpu:1", small[2, "w"] / 2, 1, 8,
                                      min_size = 1)
    expect_lt(fs, 8)
    expect_lte(kerasmesh:::text_size("cpu:0 cpu:1", fs)[1, "w"],
               small[2, "w"] / 2 * 1.2)
  })
})

test_that("names are arranged in lines to suit the cell's shape", {
  with_png({
    names <- paste0("cpu:", 0:3)
    tall <- kerasmesh:::arrange_names(names, w = 0.5, h = 2, fontsize = 10)
    wide <- kerasmesh:::arrange_names(names, w = 4, h = 0.3, fontsize = 10)
    expect_gt(lengths(regmatches(tall$label, gregexpr("\n", tall$label))),
              lengths(regmatches(wide$label, gregexpr("\n", wide$label))))
    expect_identical(kerasmesh:::arrange_names(character(), 1, 1, 10)$label,
                     "")
  })
})

test_that("panels each get their own viewport, and the page is restored", {
  with_png({
    kerasmesh:::plot_page("Title", c("one", "two"))
    seen <- integer()
    kerasmesh:::draw_panels(5, function(p) seen <<- c(seen, p))
    expect_identical(seen, 1:5)
    grid::popViewport(0)
    expect_identical(grid::current.viewport()$name, "ROOT")
  })
})

test_that("a labelled grid draws without Python", {
  with_png({
    grid::grid.newpage()
    labels <- matrix(as.list(paste0("cpu:", 0:7)), 2)
    expect_invisible(kerasmesh:::draw_labelled_grid(
      labels = labels, fills = matrix(kerasmesh:::seq_fills(4)[col(labels)], 2),
      col_sizes = rep(1, 4), row_sizes = rep(1, 2),
      col_labels = as.character(0:3), row_labels = c("0", "1"),
      col_title = "model (4)", row_title = "data (2)", heading = "stage = 0"
    ))
  })
})

test_that("the grid toolkit draws a page of labelled grids", {
  expect_picture("labelled grids on a page", function() {
    kerasmesh:::plot_page("Two panels", c("one line", "another"))
    kerasmesh:::draw_panels(2, function(p) {
      labels <- matrix(as.list(paste0("cpu:", 0:7 + 8 * (p - 1))), 2)
      kerasmesh:::draw_labelled_grid(
        labels = labels,
        fills = matrix(kerasmesh:::seq_fills(4)[col(labels)], 2),
        col_sizes = c(1, 2, 1, 4), row_sizes = c(1, 3),
        col_labels = as.character(0:3), row_labels = c("0", "1"),
        col_title = "model (4)", row_title = "data (2)",
        heading = paste("stage =", p - 1)
      )
    })
  })
})
