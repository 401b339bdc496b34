# Methods every object shares where it has none of its own (no Python).

test_that("str() and summary() show the fields; an edited object is refused", {
  lm <- fixture_layout_map()
  expect_output(str(lm), "rules")
  expect_identical(rownames(summary(lm)), c("py", "mesh", "rules"))
  mesh <- fixture_mesh()
  mesh$shape <- c(data = 4L, model = 2L)
  expect_error(summary(mesh), "object$shape", fixed = TRUE,
               class = "kerasmesh_error_argument")
})

test_that("a layout map, a distribution or a topology has no picture", {
  with_png({
    expect_error(plot(fixture_layout_map()), "no picture",
                 class = "kerasmesh_error_argument")
    expect_error(plot(fixture_distribution()), "no picture",
                 class = "kerasmesh_error_argument")
    expect_error(plot(device_topology("h100-sxm-80gb")), "no picture",
                 class = "kerasmesh_error_argument")
    for (x in list(summary(fixture_cost(), by = "layer"),
                   summary(fixture_plan()), fixture_checkpoint_info())) {
      expect_error(plot(x), "has no picture of its own",
                   class = "kerasmesh_error_argument")
    }
  })
})

test_that("summary() of any object takes no argument it would ignore", {
  objects <- list(
    fixture_mesh(), fixture_layout_map(), fixture_distribution(),
    device_topology("h100-sxm-80gb"), fixture_comparison(),
    summary(fixture_cost(), by = "layer"), summary(fixture_plan()),
    fixture_sharding(), fixture_picture(), fixture_checkpoint_info()
  )
  for (x in objects) {
    expect_error(summary(x, digits = 2), "digits",
                 class = "kerasmesh_error_argument")
    expect_s3_class(summary(x), "table")
  }
  topology <- device_topology("h100-sxm-80gb")
  topology$nodes <- "two"
  expect_error(summary(topology), "object$nodes", fixed = TRUE,
               class = "kerasmesh_error_argument")
})

test_that("meshes, maps and distributions are no lists to combine", {
  lm <- fixture_layout_map()
  mesh <- fixture_mesh()
  expect_error(c(lm, lm), "can't be combined",
               class = "kerasmesh_error_argument")
  expect_error(c(mesh), "can't be combined", class = "kerasmesh_error_argument")
  expect_error(lm == lm, "operand of ==", class = "kerasmesh_error_argument")
  expect_error(mesh + 1, "operand of +", fixed = TRUE,
               class = "kerasmesh_error_argument")
  expect_error(length(lm) <- 5, "given a length",
               class = "kerasmesh_error_argument")
  expect_identical(length(lm), 2L)
})

test_that("a saved and read object is no edit", {
  path <- withr::local_tempfile(fileext = ".rds")
  for (object in list(fixture_mesh(), fixture_layout_map(), fixture_plan(),
                      fixture_cost(), fixture_picture())) {
    saveRDS(object, path)
    expect_identical(kerasmesh:::changed_fields(readRDS(path)), character())
  }
})

test_that("a mesh or a distribution is no list to subset or to tabulate", {
  mesh <- fixture_mesh()
  expect_error(mesh[1], "subset with `[`", fixed = TRUE,
               class = "kerasmesh_error_argument")
  expect_error(as.data.frame(fixture_distribution()), "data frame",
               class = "kerasmesh_error_argument")
  expect_s3_class(as.data.frame(fixture_layout_map()), "data.frame")
})

test_that("objects that are lists of fields are no lists to combine", {
  records <- list(fixture_cost(), device_topology("h100-sxm-80gb"),
                  fixture_checkpoint_info(), fixture_search(),
                  fixture_picture(), summary(fixture_plan()))
  for (x in records) {
    expect_error(c(x, x), "can't be combined",
                 class = "kerasmesh_error_argument")
    expect_error(as.data.frame(x), "can't be made a data frame",
                 class = "kerasmesh_error_argument")
    expect_error(x == x, "operand of ==", class = "kerasmesh_error_argument")
    expect_error(sort(list(x, x)[[1]]), "can't be sorted",
                 class = "kerasmesh_error_argument")
  }
  launch <- new_launch(list(), "127.0.0.1:1", timeout = 1, elapsed = 0.1)
  expect_error(c(launch, launch), "can't be combined",
               class = "kerasmesh_error_argument")
  expect_error(launch != launch, "operand of !=", fixed = TRUE,
               class = "kerasmesh_error_argument")
  expect_error(sort(fixture_layout_map()), "can't be sorted",
               class = "kerasmesh_error_argument")
  for (x in list(fixture_layout_map(), fixture_mesh(), fixture_cost(),
                 launch)) {
    expect_error(unique(x), "can't be made unique",
                 class = "kerasmesh_error_argument")
  }
  frames <- list(fixture_plan(), fixture_comparison(), fixture_sharding(),
                 summary(fixture_cost(), by = "variable"))
  for (x in frames) {
    expect_error(sort(x), "Sort its rows by a column",
                 class = "kerasmesh_error_argument")
    expect_error(order(x), "can't be sorted or ordered as a whole",
                 class = "kerasmesh_error_argument")
    expect_error(x == x, "operand of ==", class = "kerasmesh_error_argument")
    expect_error(x + 1, "operand of +", fixed = TRUE,
                 class = "kerasmesh_error_argument")
  }
  # Their columns still compare and sort.
  plan <- fixture_plan()
  expect_identical(order(plan$path), order(plan$path))
  expect_true(all(plan$bytes >= 0))
  # What reads them still works.
  expect_identical(fixture_cost()$need, fixture_cost()$need)
  expect_s3_class(as.data.frame(launch), "data.frame")
})
