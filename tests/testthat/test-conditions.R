# ?kerasmesh_conditions must list every class a user can catch: the
# registry's kinds (R/kinds.R, generated from the shim's core/kinds.py).

listed_classes <- function() {
  text <- conditions_page_text()
  # Whole class names only: not "kerasmesh_error_<kind>" nor
  # "with_kerasmesh_errors()".
  pattern <- "(?<![a-z_])kerasmesh_(error|warning)(_[a-z]+)*(?![a-z_<])"
  unique(regmatches(text, gregexpr(pattern, text, perl = TRUE))[[1]])
}

registry_classes <- function() {
  names <- kerasmesh:::kind_names
  c(paste0("kerasmesh_error_", names$errors),
    paste0("kerasmesh_warning_", names$warnings))
}

test_that("the page lists the two umbrella classes", {
  expect_true(all(c("kerasmesh_error", "kerasmesh_warning") %in%
                    listed_classes()))
})

test_that("the page lists every kind in the registry, and nothing else", {
  expect_gt(length(kerasmesh:::kind_names$errors), 30)
  expect_gt(length(kerasmesh:::kind_names$warnings), 3)
  expect_setequal(listed_classes(),
                  c("kerasmesh_error", "kerasmesh_warning",
                    registry_classes()))
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
