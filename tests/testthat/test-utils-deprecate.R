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
