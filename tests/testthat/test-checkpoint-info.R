# checkpoint_info()'s object, built from the shim's saved descriptions
# (fixtures), so these tests run without Python.

test_that("checkpoint infos print their steps, mesh and variables", {
  expect_snapshot({
    print(fixture_checkpoint_info())
    print(fixture_checkpoint_info("checkpoint-info-incomplete"))
  })
})

test_that("a checkpoint info says which steps are complete", {
  info <- fixture_checkpoint_info("checkpoint-info-incomplete")
  expect_s3_class(info, "kerasmesh_checkpoint_info")
  expect_identical(info$steps$step, 1:3)
  expect_identical(info$steps$complete, c(TRUE, FALSE, FALSE))
  expect_match(info$steps$problem[2], "missing")
  expect_match(info$steps$problem[3], "did not finish")
  expect_identical(info$steps$problem[1], NA_character_)
  expect_false(info$last_complete)
  expect_identical(info$step, 1L)
  expect_s3_class(info$steps$time, "POSIXct")
  expect_true(is.na(info$steps$time[3]))
})

test_that("a checkpoint info lists variables with shape, layout and mesh", {
  v <- fixture_checkpoint_info()$variables
  row <- v[v$key == "trainable_variables/sequential/dense/kernel", ]
  expect_identical(row$shape[[1]], c(32L, 64L))
  expect_identical(row$axes[[1]], c(NA, "model"))
  expect_identical(row$mesh, "data=2, model=4")
  expect_identical(row$group, "trainable_variables")
  expect_true(any(v$group == "optimizer_variables"))
  scalar <- v[v$key == "optimizer_variables/adam/iteration", ]
  expect_identical(scalar$shape[[1]], integer())
  expect_identical(scalar$dtype, "int32")
})

test_that("a checkpoint info without a complete step or variables prints", {
  desc <- fixture("checkpoint-info-incomplete")
  desc$steps$complete <- list(FALSE, FALSE, FALSE)
  # As the shim describes it: None for both.
  desc["step"] <- list(NULL)
  desc["variables"] <- list(NULL)
  info <- kerasmesh:::new_checkpoint_info(desc)
  expect_null(info$variables)
  expect_identical(utils::tail(format(info), 1), "No complete step.")
})

test_that("a checkpoint info says who wrote each step kerasmesh did not", {
  desc <- fixture("checkpoint-info")
  desc$steps$step <- c(1L, 2L, 5L, 7L)
  desc$steps$complete <- list(TRUE, TRUE, FALSE, TRUE)
  desc$steps$problem <- list(NULL, NULL, "Orbax's commit record is missing",
                             NULL)
  desc$steps$time <- list(1.7e9, 1.7e9, NULL, 1.7e9)
  desc$steps$writer <- list("kerasmesh", "kerasmesh", "unknown", "orbax")
  info <- kerasmesh:::new_checkpoint_info(desc)
  expect_identical(info$steps$writer,
                   c("kerasmesh", "kerasmesh", "unknown", "orbax"))
  lines <- format(info)
  expect_identical(lines[2], "4 steps: 1, 2, 5 (incomplete), 7")
  expect_identical(lines[3], paste(
    "  step 5: Orbax's commit record is missing; not saved by kerasmesh"
  ))
  expect_identical(lines[4], paste(
    "  step 7: written by another Orbax tool, not kerasmesh"
  ))
})

test_that("a single damaged step's problem is no row name", {
  desc <- fixture("checkpoint-info")
  # As reticulate converts the shim's lists of one string.
  desc$steps$step <- 4L
  desc$steps$complete <- FALSE
  desc$steps$problem <- "its file list is missing"
  desc$steps$time <- 1.7e9
  desc$steps$writer <- "kerasmesh"
  info <- kerasmesh:::new_checkpoint_info(desc)
  expect_identical(rownames(info$steps), "1")
  expect_identical(info$steps$problem, "its file list is missing")
})
