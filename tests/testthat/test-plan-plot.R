test_that("plot() draws a layout plan's memory with a limit", {
  skip_if_no_keras()
  lm <- book_layout()
  plan <- layout_plan(book_builder(), lm, optimizer = "adam")
  expect_invisible(with_png(plot(plan, memory = "16GB")))
  expect_identical(with_png(plot(plan, by = "part", memory = 8e9)), plan)
  expect_identical(with_png(plot(plan, by = "variable", what = "weights")),
                   plan)
  expect_identical(with_png(plot(plan, path = "dense/kernel")), plan)
})

test_that("memory parts add up to the plan's totals", {
  skip_if_no_keras()
  plan <- layout_plan(book_builder(), book_layout(), optimizer = "adam")
  s <- summary(plan)
  kinds <- plan_memory_parts(plan, "part", "total")
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
  kinds <- plan_memory_parts(plan, "part", "total")
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

test_that("a bad limit is a classed error that lists the units", {
  skip_if_no_keras()
  plan <- layout_plan(build_mlp(), book_layout())
  expect_snapshot(error = TRUE, {
    plot(plan, memory = "lots")
    plot(plan, by = "rules")
  })
})

test_that("a plan plots by each grouping, with and without a limit", {
  plan <- fixture_plan()
  for (by in c("layer", "rule", "variable", "part")) {
    expect_invisible(with_png(plot(plan, by = by)))
    expect_identical(with_png(plot(plan, by = by, memory = "16GB")), plan)
  }
})

test_that("memory parts add up to the totals, for every grouping", {
  plan <- fixture_plan()
  s <- attr(plan, "summary")
  for (by in c("layer", "rule", "variable", "part")) {
    parts <- kerasmesh:::plan_memory_parts(plan, by, "total")
    expect_equal(sum(parts$device), s$device_total, label = by)
    expect_equal(sum(parts$replicated), s$replicated_total, label = by)
    weights <- kerasmesh:::plan_memory_parts(plan, by, "weights")
    expect_equal(sum(weights$device), s$device_weights, label = by)
  }
})

test_that("by, what and limit are checked before anything is drawn", {
  plan <- fixture_plan()
  expect_error(plot(plan, by = "rules"), class = "kerasmesh_error_argument")
  expect_error(plot(plan, by = NA), class = "kerasmesh_error_argument")
  expect_error(plot(plan, what = "bytes"), class = "kerasmesh_error_argument")
  expect_error(plot(plan, what = c("total", "weights", "x")),
               class = "kerasmesh_error_argument")
  expect_error(plot(plan, memory = "lots"), class = "kerasmesh_error_argument")
  expect_error(plot(plan, memory = 0), class = "kerasmesh_error_argument")
  expect_error(plot(plan, n = 0), class = "kerasmesh_error_argument")
  expect_error(plot(plan, n = 3e9),
               class = "kerasmesh_error_argument")
  expect_snapshot(error = TRUE, {
    plot(plan, by = "rules")
    plot(plan, what = 1)
    plot(plan, memory = "16 GX")
  })
})

test_that("a plan's memory parts group by kind, layer, rule or variable", {
  plan <- fixture_plan()
  kinds <- plan_memory_parts(plan, "part", "total")
  expect_identical(kinds$group, c("weights", "gradients", "Adam slots"))
  layers <- plan_memory_parts(plan, "layer", "total")
  expect_identical(layers$group, c("dense", "dense_1"))
  weights <- plan_memory_parts(plan, "variable", "weights")
  expect_identical(weights$group, c("dense/kernel", "dense/bias",
                                    "dense_1/kernel", "dense_1/bias"))
  expect_equal(weights$device[[1]], 16000 * 64000 * 4 / 4)
  none <- plan_memory_parts(fixture_plan("plan-book-no-optimizer"), "part",
                            "total")
  expect_identical(none$group, c("weights", "gradients"))
  rules <- plan_memory_parts(fixture_plan("plan-errors"), "rule", "weights")
  expect_setequal(rules$group, c(".*kernel", "(no rule)"))
})

test_that("a transformer's layers are lumped into numbered groups", {
  plan <- fixture_plan("plan-gemma-18-blocks")
  parts <- plan_memory_parts(plan, "layer", "weights", n = 10)
  expect_lte(nrow(parts), 12)
  expect_true(any(grepl("decoder_block_*/", parts$group, fixed = TRUE)))
  s <- summary(plan)
  expect_equal(sum(parts$device), s$device_weights)
})

test_that("a plan draws stacked by layer, with a device memory line", {
  expect_picture("plan by layer with limit", function() {
    plot(fixture_plan(), memory = "16GB")
  })
})

test_that("a plan draws stacked by rule, variable and kind", {
  plan <- fixture_plan()
  expect_picture("plan by rule", function() plot(plan, by = "rule"))
  expect_picture("plan by variable, weights", function() {
    plot(plan, by = "variable", what = "weights", main = "Weights only")
  })
  expect_picture("plan by kind", function() {
    plot(plan, by = "part", memory = 8e9)
  })
})

test_that("plans with problems, many layers or no parameters draw", {
  expect_picture("plan with problems", function() {
    plot(fixture_plan("plan-errors"), by = "rule")
  })
  expect_pictures(
    "plan of 18 blocks" = fixture_plan("plan-gemma-18-blocks"),
    "plan without parameters" = fixture_plan("plan-no-parameters")
  )
})

test_that("an edited plan and a title that is not one string are refused", {
  plan <- fixture_plan()
  plan$device_bytes <- NULL
  expect_error(plot(plan), "x$device_bytes", fixed = TRUE,
               class = "kerasmesh_error_argument")
  for (main in list(c("a", "b"), 1, NA_character_)) {
    expect_error(plot(fixture_plan(), main = main), "`main`",
                 class = "kerasmesh_error_argument")
  }
})

test_that("plot(plan, path =) takes nothing that groups the plan", {
  plan <- fixture_plan()
  with_png({
    expect_error(plot(plan, path = plan$path[[1]], by = "rule"),
                 "`by` is not taken", class = "kerasmesh_error_argument")
    expect_error(plot(plan, path = plan$path[[1]], n = 3, memory = "1GB"),
                 "`memory` and `n` are not taken",
                 class = "kerasmesh_error_argument")
  })
})
