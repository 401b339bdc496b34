# summary() of a plan is pure R: built from a saved description.

test_that("a plan's summary prints memory, batch, rules and problems", {
  expect_snapshot(print(summary(fixture_plan())))
})

test_that("a plan's summary counts errors and warnings and keeps the mesh", {
  s <- summary(fixture_plan())
  expect_s3_class(s, "kerasmesh_layout_plan_summary")
  expect_identical(s$errors, 0L)
  expect_identical(s$warnings, 0L)
  expect_s3_class(s$mesh, "kerasmesh_device_mesh")
  expect_identical(nrow(s$by_rule), 2L)
})

test_that("summaries of plans with problems, outputs or nothing print", {
  expect_snapshot({
    print(summary(fixture_plan("plan-book-no-optimizer")))
    print(summary(fixture_plan("plan-book-batch")))
    print(summary(fixture_plan("plan-errors")))
    print(summary(fixture_plan("plan-no-parameters")))
    print(summary(fixture_plan("plan-outputs")))
    print(summary(fixture_plan("plan-llama-replicated")))
  })
})

test_that("a summary counts each plan's errors and warnings", {
  counts <- function(name) {
    s <- summary(fixture_plan(name))
    c(s$errors, s$warnings)
  }
  expect_identical(counts("plan-errors"), c(2L, 1L))
  # keras-hub's maps also lack the blocks' output rule: one warning more.
  expect_identical(counts("plan-gemma-one-kv-head"), c(6L, 1L))
  expect_identical(counts("plan-llama-replicated"), c(0L, 2L))
  expect_identical(counts("plan-no-parameters"), c(0L, 2L))
})

test_that("a summary's totals per rule add up to the plan", {
  for (name in c("plan-book", "plan-errors", "plan-gemma-18-blocks",
                 "plan-llama-replicated", "plan-outputs")) {
    plan <- fixture_plan(name)
    s <- summary(plan)
    expect_equal(sum(s$by_rule$device_bytes), s$device_weights, label = name)
    expect_identical(sum(s$by_rule$variables), nrow(plan), label = name)
  }
})

test_that("variables no rule matches are totalled as (no rule)", {
  s <- summary(fixture_plan("plan-errors"))
  expect_identical(s$by_rule$rule, c(".*kernel", "(no rule)"))
  expect_identical(s$by_rule$variables, c(2L, 1L))
  expect_identical(s$unmatched, "encoder/.*")
  expect_identical(s$batch_size, 3L)
})

test_that("a summary of many rules fits 80 columns and lists the largest", {
  s <- summary(fixture_plan("plan-gemma-18-blocks"))
  lines <- format(s)
  expect_lte(max(nchar(lines)), 80)
  table <- kerasmesh:::format_rule_totals(s$by_rule, width = 80,
                                          max_rules = 3)
  expect_length(table, 1 + 1 + 3 + 1)
  expect_match(table[length(table)], "... and 4 more rules", fixed = TRUE)
})

test_that("a plan's output rules are in its summary", {
  s <- summary(fixture_plan("plan-outputs"))
  expect_length(s$unmatched, 0)
  expect_identical(s$outputs$key, ".*dense.*output")
  expect_identical(s$outputs$layers, 2L)
  expect_identical(s$outputs$classes[[1]], "Dense")
})
