test_that("plot() draws a layout plan's memory with a limit", {
  skip_if_no_keras()
  lm <- book_layout()
  plan <- layout_plan(book_builder(), lm, optimizer = "adam")
  expect_invisible(with_png(plot(plan, limit = "16GB")))
  expect_identical(with_png(plot(plan, by = "kind", limit = 8e9)), plan)
  expect_identical(with_png(plot(plan, by = "variable", what = "weights")),
                   plan)
  expect_identical(with_png(plot(plan, path = "dense/kernel")), plan)
})

test_that("memory parts add up to the plan's totals", {
  skip_if_no_keras()
  plan <- layout_plan(book_builder(), book_layout(), optimizer = "adam")
  s <- summary(plan)
  kinds <- plan_memory_parts(plan, "kind", "total")
  expect_identical(kinds$group, c("weights", "gradients", "Adam slots"))
  expect_equal(sum(kinds$device), s$device_total)
  expect_equal(sum(kinds$replicated), s$replicated_total)
  layers <- plan_memory_parts(plan, "layer", "total")
  expect_identical(layers$group, c("dense", "dense_1"))
  expect_equal(sum(layers$device), s$device_total, tolerance = 1e-6)
  weights <- plan_memory_parts(plan, "variable", "weights")
  expect_identical(weights$group, c("dense/kernel", "dense/bias",
                                    "dense_1/kernel", "dense_1/bias"))
  expect_equal(sum(weights$device), s$device_weights)
  # 16000 x 64000 float32, split 4 ways: 1.024 GB per device.
  expect_equal(weights$device[[1]], 16000 * 64000 * 4 / 4)
})

test_that("a plan without an optimizer counts weights and gradients", {
  skip_if_no_keras()
  plan <- layout_plan(book_builder(), book_layout())
  kinds <- plan_memory_parts(plan, "kind", "total")
  expect_identical(kinds$group, c("weights", "gradients"))
  expect_invisible(with_png(plot(plan)))
})

test_that("many groups are lumped into one", {
  parts <- data.frame(group = letters[1:5], device = 5:1,
                      replicated = c(50, 1, 40, 2, 30))
  lumped <- lump_groups(parts, 3)
  expect_identical(lumped$group, c("a", "c", "3 others"))
  expect_identical(lumped$replicated, c(50, 40, 33))
})

test_that("limits parse as bytes in powers of 1000 or 1024", {
  expect_identical(parse_bytes("80GB"), 80e9)
  expect_identical(parse_bytes("16 GiB"), 16 * 2^30)
  expect_identical(parse_bytes("512mb"), 512e6)
  expect_identical(parse_bytes("1.5 TB"), 1.5e12)
  expect_identical(parse_bytes(2e9), 2e9)
  expect_identical(parse_bytes("1000"), 1000)
  expect_null(parse_bytes(NULL))
})

test_that("a bad limit is a classed error that lists the units", {
  expect_error(parse_bytes("80 GX"), class = "kerasmesh_error_argument")
  expect_error(parse_bytes(c(1, 2)), class = "kerasmesh_error_argument")
  expect_error(parse_bytes(-1), class = "kerasmesh_error_argument")
  skip_if_no_keras()
  plan <- layout_plan(build_mlp(), book_layout())
  expect_snapshot(error = TRUE, {
    plot(plan, limit = "lots")
    plot(plan, by = "rules")
  })
})

test_that("a plan plots by each grouping, with and without a limit", {
  plan <- fixture_plan()
  for (by in c("layer", "rule", "variable", "kind")) {
    expect_invisible(with_png(plot(plan, by = by)))
    expect_identical(with_png(plot(plan, by = by, limit = "16GB")), plan)
  }
})

test_that("memory parts add up to the totals, for every grouping", {
  plan <- fixture_plan()
  s <- attr(plan, "summary")
  for (by in c("layer", "rule", "variable", "kind")) {
    parts <- kerasmesh:::plan_memory_parts(plan, by, "total")
    expect_equal(sum(parts$device), s$device_total, label = by)
    expect_equal(sum(parts$replicated), s$replicated_total, label = by)
    weights <- kerasmesh:::plan_memory_parts(plan, by, "weights")
    expect_equal(sum(weights$device), s$device_weights, label = by)
  }
})
