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
