# The plan object, from a saved description (no Python).

test_that("subsets and as.data.frame() are plain data frames", {
  plan <- fixture_plan()
  expect_s3_class(plan, "kerasmesh_layout_plan")
  df <- as.data.frame(plan)
  expect_identical(class(df), "data.frame")
  expect_null(attr(df, "summary"))
  expect_identical(class(plan[1:2, ]), "data.frame")
  expect_identical(nrow(plan[1:2, ]), 2L)
})

test_that("a plan edited by hand is refused, naming what is missing", {
  plan <- fixture_plan()
  plan[[1]] <- NULL
  for (f in list(format, summary, check_layout, sharding_picture)) {
    expect_error(f(plan), "$path", fixed = TRUE,
                 class = "kerasmesh_error_argument")
  }
  plan <- fixture_plan()
  plan$bytes <- "many"
  expect_error(print(plan), "x$bytes", fixed = TRUE,
               class = "kerasmesh_error_argument")
  plan <- fixture_plan()
  attr(plan, "summary") <- NULL
  expect_error(format(plan), 'attr(x, "summary")', fixed = TRUE,
               class = "kerasmesh_error_argument")
  attr(plan, "summary") <- attr(fixture_plan(), "summary")
  attr(plan, "mesh") <- "2x4"
  expect_error(format(plan), 'attr(x, "mesh")', fixed = TRUE,
               class = "kerasmesh_error_argument")
})

test_that("plans bound by rows are plain data frames, as subsets are", {
  both <- rbind(fixture_plan(), fixture_plan())
  expect_identical(class(both), "data.frame")
  expect_identical(nrow(both), 8L)
})
