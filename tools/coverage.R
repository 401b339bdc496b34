# `make coverage`: line coverage of R/ by the testthat suite, with Python.
# The test files that start worker processes are left out: the workers load
# covr's instrumented package too (launch_local() and callr pass the library
# path on), and the ones the tests kill on purpose leave half-written traces
# that covr can't read. The figure is therefore a lower bound for the files
# those tests exercise (launch*.R, checkpoint.R, distributed.R).
tests <- normalizePath("tests/testthat")
multi_process <- c("checkpoint", "hostile", "hostile-launch", "launch",
                   "launchers", "mpirun", "multiprocess")
filter <- sprintf("^(?!(%s)$)", paste(multi_process, collapse = "|"))
code <- sprintf(
  'testthat::test_dir("%s", package = "kerasmesh", load_package = "installed",
                      filter = "%s", perl = TRUE, stop_on_failure = FALSE,
                      reporter = "summary")',
  tests, filter
)
coverage <- covr::package_coverage(type = "none", code = code, quiet = TRUE)
by_line <- covr::tally_coverage(coverage, by = "line")
per_file <- tapply(by_line$value > 0, by_line$filename, mean)
print(round(100 * sort(per_file), 1))
cat(sprintf("R line coverage, without %s: %.1f%%\n",
            paste0("test-", multi_process, ".R", collapse = ", "),
            covr::percent_coverage(coverage)))
