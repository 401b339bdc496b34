test_that("plot() draws a layout cost and a comparison", {
  skip_if_no_keras()
  build <- mlp_builder()
  dist <- model_parallel(book_layout())
  cost <- layout_cost(build, dist, batch_size = 16, optimizer = "adam")
  expect_invisible(with_png(plot(cost)))
  expect_identical(with_png(plot(cost, device_memory = "20kB")), cost)
  cmp <- compare_layouts(build, list(dp = data_parallel(), mp = dist),
                         batch_size = 16, device_memory = "30kB")
  expect_identical(with_png(plot(cmp, main = "Two layouts")), cmp)
  expect_invisible(with_png(plot(cmp, device_memory = "1MB")))
})

test_that("a plotted comparison marks the layouts that fit", {
  skip_if_no_keras()
  build <- mlp_builder()
  cmp <- compare_layouts(build, list(dp = data_parallel(),
                                     mp = model_parallel(book_layout())),
                         batch_size = 16)
  expect_null(cmp$fits)
  drawn <- with_png({
    plot(cmp, device_memory = "20kB")
    grid::grid.ls(print = FALSE)$name
  })
  expect_true(length(drawn) > 10)
})
