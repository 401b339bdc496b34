# Printing a plan is pure R: these tests build the plan from a saved
# description (helper-fixtures.R) and run without Python.

test_that("a plan prints its table, totals and problems", {
  expect_snapshot(print(fixture_plan()))
})

test_that("a plan's table fits the width it is given", {
  plan <- fixture_plan()
  for (width in c(40, 50, 60, 72, 80, 100)) {
    lines <- format(plan, width = width)
    expect_true(all(nchar(lines) <= max(width, 80)), label = width)
  }
})

test_that("only n variables are listed, then a count of the rest", {
  lines <- format(fixture_plan(), n = 1)
  expect_identical(sum(grepl("dense", lines)), 1L)
  expect_true(any(grepl("... and 3 more variables", lines, fixed = TRUE)))
  lines <- format(fixture_plan(), n = 3)
  expect_true(any(grepl("... and 1 more variable$", lines)))
})

test_that("subsets and as.data.frame() are plain data frames", {
  plan <- fixture_plan()
  expect_s3_class(plan, "kerasmesh_layout_plan")
  df <- as.data.frame(plan)
  expect_identical(class(df), "data.frame")
  expect_null(attr(df, "summary"))
  expect_identical(class(plan[1:2, ]), "data.frame")
  expect_identical(nrow(plan[1:2, ]), 2L)
})
