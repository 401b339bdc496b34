# `make lint`: the package with .lintr (tidyverse defaults), and the tests
# with the same linters but object usage: lintr lints a test file alone, so
# it can't see the helpers that testthat loads from helper-*.R.
test_linters <- lintr::linters_with_defaults(
  cyclocomp_linter = NULL,
  object_usage_linter = NULL
)
lints <- c(
  lintr::lint_package(),
  lintr::lint_dir("tests/testthat", linters = test_linters,
                  parse_settings = FALSE)
)
if (length(lints) > 0) {
  print(lints)
  cat(sprintf("lint: %d lints\n", length(lints)))
  quit(status = 1)
}
cat("lint: no lints\n")
