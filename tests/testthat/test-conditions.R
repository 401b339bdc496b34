# ?kerasmesh_conditions must list every class a user can catch.

listed_classes <- function() {
  text <- conditions_page_text()
  # Whole class names only: not "kerasmesh_error_<kind>" nor
  # "with_kerasmesh_errors()".
  pattern <- "(?<![a-z_])kerasmesh_(error|warning)(_[a-z]+)*(?![a-z_<])"
  unique(regmatches(text, gregexpr(pattern, text, perl = TRUE))[[1]])
}

test_that("the page lists the two umbrella classes", {
  expect_true(all(c("kerasmesh_error", "kerasmesh_warning") %in%
                    listed_classes()))
})

test_that("every kind the R code and the shim raise is on the page", {
  kinds <- raised_condition_kinds()
  expect_gt(length(kinds$errors), 30)
  expect_gt(length(kinds$warnings), 3)
  raised <- c(paste0("kerasmesh_error_", kinds$errors),
              paste0("kerasmesh_warning_", kinds$warnings))
  expect_identical(setdiff(raised, listed_classes()), character())
})

test_that("the page lists no class that nothing raises", {
  kinds <- raised_condition_kinds()
  raised <- c("kerasmesh_error", "kerasmesh_warning",
              paste0("kerasmesh_error_", kinds$errors),
              paste0("kerasmesh_warning_", kinds$warnings))
  expect_identical(setdiff(listed_classes(), raised), character())
})

test_that("every kind in the shim's registry (errors.kinds()) is on the page", {
  skip_if_no_keras()
  registry <- tryCatch(
    kerasmesh:::shim_call("errors.kinds"),
    kerasmesh_error_python = function(e) NULL
  )
  if (is.null(registry)) {
    skip(paste("errors.kinds() is not in the shim on this branch yet",
               "(the Python side of issue #11 adds it); the source scan",
               "above checks the same kinds meanwhile."))
  }
  raised <- c(paste0("kerasmesh_error_", names(registry$errors)),
              paste0("kerasmesh_warning_", names(registry$warnings)))
  expect_identical(setdiff(raised, listed_classes()), character())
})

test_that("a raised condition carries its kind and the umbrella class", {
  err <- tryCatch(
    kerasmesh:::kerasmesh_abort("Example.", kind = "argument"),
    error = function(e) e
  )
  expect_s3_class(err, c("kerasmesh_error_argument", "kerasmesh_error"))
  expect_warning(
    kerasmesh:::kerasmesh_warn("Example.", kind = "replicated"),
    class = "kerasmesh_warning_replicated"
  )
})
