# The counting half of tools/no-python.sh, which sets up the environment
# without Python and runs this from the package root:
#   Rscript tools/no-python.R [PASS_WITH_PYTHON]
min_share <- 0.40
rcheck <- "check/kerasmesh.Rcheck"

stop_check <- function(...) {
  message("check-no-python: ", ...)
  quit(status = 1)
}

# Expectations that passed with Python: the last testthat summary line of
# R CMD check's log, "[ FAIL 0 | WARN 0 | SKIP 0 | PASS 1278 ]".
pass_with_python <- function(args) {
  if (length(args) >= 1) {
    return(as.numeric(args[[1]]))
  }
  logs <- file.path(rcheck, "tests", c("testthat.Rout", "testthat.Rout.fail"))
  logs <- logs[file.exists(logs)]
  if (length(logs) == 0) {
    stop_check("no R CMD check log (",
               file.path(rcheck, "tests/testthat.Rout"),
               "): run `make rcheck` first, or pass the count with Python.")
  }
  lines <- readLines(logs[[1]], warn = FALSE)
  hits <- regmatches(lines, regexpr("PASS [0-9]+ \\]", lines))
  if (length(hits) == 0) {
    stop_check("no testthat summary line in ", logs[[1]], ".")
  }
  as.numeric(gsub("[^0-9]", "", hits[[length(hits)]]))
}

with_python <- pass_with_python(commandArgs(trailingOnly = TRUE))

installed <- file.path(rcheck, "kerasmesh")
if (dir.exists(installed)) {
  .libPaths(c(rcheck, .libPaths()))
  source_of_package <- paste("installed in", rcheck)
  run <- function(reporter) {
    testthat::test_dir("tests/testthat", package = "kerasmesh",
                       load_package = "installed", reporter = reporter,
                       stop_on_failure = FALSE, stop_on_warning = FALSE)
  }
} else {
  source_of_package <- "the source, by pkgload::load_all()"
  run <- function(reporter) {
    testthat::test_local(".", reporter = reporter, stop_on_failure = FALSE)
  }
}

message("check-no-python: testing kerasmesh ", source_of_package,
        " without Python (HOME=", Sys.getenv("HOME"), ", KERASMESH_VENV=",
        Sys.getenv("KERASMESH_VENV"), ")")
started <- Sys.time()
results <- run(testthat::CheckReporter$new())
kinds <- unlist(lapply(results, function(test) {
  vapply(test$results, function(e) class(e)[[1]], "")
}))
count <- function(kind) sum(kinds == kind)
passed <- count("expectation_success")
failed <- count("expectation_failure")
errors <- count("expectation_error")
skipped <- count("expectation_skip")
share <- passed / with_python

cat(sprintf(paste0(
  "\ncheck-no-python: without Python %d passed, %d failed, %d errors, ",
  "%d skipped (%.0f s)\n",
  "check-no-python: with Python (R CMD check) %d passed\n",
  "check-no-python: %d / %d = %.1f%% run without Python (at least %.0f%%)\n"),
  passed, failed, errors, skipped,
  as.numeric(difftime(Sys.time(), started, units = "secs")),
  with_python, passed, with_python, 100 * share, 100 * min_share))

if (failed + errors > 0) {
  stop_check(failed + errors, " expectation(s) failed without Python.")
}
if (!is.finite(share) || share < min_share) {
  stop_check(sprintf("only %.1f%% of the expectations run without Python.",
               100 * share))
}
