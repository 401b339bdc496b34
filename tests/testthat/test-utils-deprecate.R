# Renames keep working for one release: the old name warns and names the
# new one; both names at once is an error saying which to keep.

renamed_fixture <- function(memory = NULL, device_memory = deprecated()) {
  renamed_arg("memory", "device_memory")
}

test_that("the new name of a renamed argument is used without a warning", {
  expect_no_warning(value <- renamed_fixture(memory = 5))
  expect_identical(value, 5)
  expect_null(renamed_fixture())
})

test_that("the old name of a renamed argument works, with a classed warning", {
  expect_warning(value <- renamed_fixture(device_memory = 7),
                 class = "kerasmesh_warning_deprecated")
  expect_identical(value, 7)
  w <- tryCatch(renamed_fixture(device_memory = 7), warning = identity)
  expect_s3_class(w, "kerasmesh_warning")
  expect_identical(c(w$old, w$new), c("device_memory", "memory"))
  expect_snapshot(renamed_fixture(device_memory = 7))
})

test_that("a renamed argument given under both names is a classed error", {
  expect_error(renamed_fixture(memory = 1, device_memory = 2),
               class = "kerasmesh_error_deprecated")
  expect_snapshot(renamed_fixture(memory = 1, device_memory = 2),
                  error = TRUE)
})

test_that("an old function name warns, naming the new one", {
  old_fixture <- function() {
    renamed_function("old_fixture", "new_fixture")
    "value"
  }
  expect_warning(value <- old_fixture(), class = "kerasmesh_warning_deprecated")
  expect_identical(value, "value")
  expect_snapshot(old_fixture())
})

test_that("the name typed is the one a check of the value names", {
  typed <- function(memory = NULL, device_memory = deprecated()) {
    typed_name("memory", "device_memory")
  }
  expect_identical(typed(), "memory")
  expect_identical(typed(memory = 1), "memory")
  expect_identical(typed(device_memory = 1), "device_memory")
  cost <- fixture_cost()
  cmp <- fixture_comparison()
  expect_snapshot(error = TRUE, {
    format(cost, device_memory = "lots")
    format(cmp, device_memory = "lots")
    plot(cmp, device_memory = "lots")
    format(summary(cost, by = "variable"), max_rows = -1)
  })
})

test_that("print() and format() of a comparison take its old name for memory", {
  cmp <- fixture_comparison()
  expect_warning(old <- format(cmp, device_memory = "1MB"),
                 class = "kerasmesh_warning_deprecated")
  expect_identical(old, format(cmp, memory = "1MB"))
  expect_false(identical(old, format(cmp)))
  expect_warning(capture.output(print(cmp, device_memory = "1MB")),
                 class = "kerasmesh_warning_deprecated")
})

test_that("a renamed function takes every argument of its new name", {
  expect_identical(formals(checkpoint_callback), formals(callback_checkpoint))
})

test_that("a renamed function passes the new arguments on", {
  skip_if_no_keras()
  expect_warning(cb <- checkpoint_callback(tempfile(), background = FALSE,
                                           timeout = 5),
                 class = "kerasmesh_warning_deprecated")
  expect_false(cb$background)
  expect_identical(cb$timeout, 5)
})
