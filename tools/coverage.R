# `make coverage`: line coverage of R/ by the testthat suite, with Python.
coverage <- covr::package_coverage(type = "tests", quiet = TRUE)
by_file <- covr::tally_coverage(coverage, by = "line")
per_file <- tapply(by_file$value > 0, by_file$filename, mean)
print(round(100 * sort(per_file), 1))
cat(sprintf("R line coverage: %.1f%%\n", covr::percent_coverage(coverage)))
