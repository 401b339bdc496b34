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

test_that("plans without an optimizer or with a batch size print totals", {
  expect_snapshot({
    print(fixture_plan("plan-book-no-optimizer"))
    print(fixture_plan("plan-book-batch"))
  })
})

test_that("a plan with problems marks their rows and lists them grouped", {
  plan <- fixture_plan("plan-errors")
  lines <- format(plan, width = 80)
  expect_match(lines, "^  x  dense/kernel", all = FALSE)
  expect_match(lines, "Problems: 2 errors, 1 warning", fixed = TRUE,
               all = FALSE)
  expect_snapshot(print(plan, width = 80))
})

test_that("a replicated variable is marked with a warning and its fix", {
  plan <- fixture_plan("plan-llama-replicated")
  lines <- format(plan, width = 80)
  expect_match(lines, "^  !  token_embedding/reverse_embeddings", all = FALSE)
  expect_snapshot(print(plan, width = 80, n = 4))
})

test_that("a transformer's plan prints grouped within 80 columns", {
  for (name in c("plan-gemma-one-kv-head", "plan-gemma-18-blocks",
                 "plan-llama-replicated")) {
    lines <- format(fixture_plan(name), width = 80)
    expect_lte(max(nchar(lines)), 80, label = name)
  }
  plan <- fixture_plan("plan-gemma-18-blocks")
  lines <- format(plan, width = 80)
  # Block numbers stay visible; the 36 failing variables are one group.
  expect_match(lines, "decoder_block_0/", fixed = TRUE, all = FALSE)
  expect_match(lines, "can't split 36", fixed = TRUE, all = FALSE)
  expect_match(lines, "decoder_block_{0..17}/attention/{key,value}/kernel",
               fixed = TRUE, all = FALSE)
  expect_snapshot(print(plan, width = 80, n = 6))
})

test_that("narrow widths drop the axes, then shorten paths and rules", {
  plan <- fixture_plan("plan-gemma-one-kv-head")
  wide <- format(plan, width = 200, n = 3)
  narrow <- format(plan, width = 60, n = 3)
  expect_match(wide[2], "axes", fixed = TRUE)
  expect_no_match(narrow[2], "axes", fixed = TRUE)
  expect_snapshot(print(plan, width = 60, n = 3))
})

test_that("a path prefix all variables share is shown once", {
  lines <- format(fixture_plan("plan-prefix"), width = 80)
  expect_identical(lines[2], 'Paths below "stack/":')
  expect_match(lines, "^\\s+block_1/kernel", all = FALSE)
  expect_no_match(lines, "^\\s+stack/block")
})

test_that("a plan without parameters prints its totals as 0 bytes", {
  plan <- fixture_plan("plan-no-parameters")
  expect_identical(nrow(plan), 0L)
  expect_snapshot(print(plan))
})

test_that("output rules are listed with their layers", {
  plan <- fixture_plan("plan-outputs")
  lines <- format(plan, width = 80)
  expect_match(lines, "Rules for layer outputs:", fixed = TRUE, all = FALSE)
  expect_match(lines, '".*dense.*output": 2 layers (Dense)', fixed = TRUE,
               all = FALSE)
  expect_snapshot(print(plan, width = 80))
})

test_that("n and width are checked; n = 0 lists no variables", {
  plan <- fixture_plan()
  expect_no_warning(lines <- format(plan, n = 0))
  expect_false(any(grepl("dense", lines[-1])))
  expect_true(any(grepl("... and 4 more variables", lines, fixed = TRUE)))
  for (n in list(-1, NA, "3", 1.5)) {
    expect_error(format(plan, n = n), "`n`", class = "kerasmesh_error_argument")
  }
  for (width in list(NA, "80", 0)) {
    expect_error(format(plan, width = width), "`width`",
                 class = "kerasmesh_error_argument")
  }
})
