test_that("plot() draws a layout cost and a comparison", {
  skip_if_no_keras()
  build <- mlp_builder()
  dist <- model_parallel(book_layout())
  cost <- layout_cost(build, dist, batch_size = 16, optimizer = "adam")
  expect_invisible(with_png(plot(cost)))
  expect_identical(with_png(plot(cost, memory = "20kB")), cost)
  cmp <- compare_layouts(build, list(dp = data_parallel(), mp = dist),
                         batch_size = 16, memory = "30kB")
  expect_identical(with_png(plot(cmp, main = "Two layouts")), cmp)
  expect_invisible(with_png(plot(cmp, memory = "1MB")))
})

test_that("a plotted comparison marks the layouts that fit", {
  skip_if_no_keras()
  build <- mlp_builder()
  cmp <- compare_layouts(build, list(dp = data_parallel(),
                                     mp = model_parallel(book_layout())),
                         batch_size = 16)
  expect_null(cmp$fits)
  drawn <- with_png({
    plot(cmp, memory = "20kB")
    grid::grid.ls(print = FALSE)$name
  })
  expect_true(length(drawn) > 10)
})

test_that("costs and comparisons plot from descriptions", {
  for (name in c("cost-model-parallel", "cost-data-parallel")) {
    cost <- fixture_cost(name)
    expect_invisible(with_png(plot(cost)))
    expect_identical(with_png(plot(cost, memory = "20kB")), cost)
  }
  cmp <- fixture_comparison("30kB")
  expect_identical(with_png(plot(cmp, main = "Two layouts")), cmp)
  expect_invisible(with_png(plot(cmp, memory = "1MB")))
})

test_that("a bad device memory is refused before drawing", {
  expect_error(plot(fixture_cost(), memory = "lots"),
               class = "kerasmesh_error_argument")
  expect_error(plot(fixture_comparison(), memory = -1),
               class = "kerasmesh_error_argument")
})

test_that("a layout cost draws its memory and traffic", {
  expect_picture("cost model parallel", function() plot(fixture_cost()))
  expect_picture("cost with device memory", function() {
    plot(fixture_cost("cost-data-parallel"), memory = "60kB")
  })
})

test_that("a cost without collectives draws an empty traffic panel", {
  expect_picture("cost without collectives", function() {
    plot(fixture_cost("cost-no-collectives"))
  })
})

test_that("a comparison draws each layout, marking those that fit", {
  expect_picture("comparison", function() plot(fixture_comparison()))
  expect_picture("comparison with device memory", function() {
    plot(fixture_comparison("30kB"), main = "Data or model parallel")
  })
})

test_that("a comparison of no layouts and an edited cost are refused", {
  cmp <- fixture_comparison()
  expect_error(plot(cmp[0, ]), "at least one layout",
               class = "kerasmesh_error_argument")
  cost <- fixture_cost()
  cost$plan <- NULL
  expect_error(plot(cost), "x$plan", fixed = TRUE,
               class = "kerasmesh_error_argument")
  edited <- cmp
  edited$total <- NULL
  expect_error(format(edited), "x$total", fixed = TRUE,
               class = "kerasmesh_error_argument")
  attr(cmp, "traffic") <- NULL
  expect_error(plot(cmp), "attr(x, \"traffic\")", fixed = TRUE,
               class = "kerasmesh_error_argument")
})
