# The package's source as a whole: one bridge to Python, each R file its
# test file, files and functions short enough to read in one sitting, in
# R/ and in every subpackage of the Python shim. The checks take the files
# they read, so the last tests run them on small trees made for them and see
# each rule fail.

# Names of the files over `max` lines.
long_files <- function(files, max) {
  sizes <- vapply(files, function(f) length(readLines(f)), 1L)
  names(files)[sizes > max]
}

# Lines of each top-level function, named "file name".
function_lengths <- function(files) {
  unlist(lapply(names(files), function(file) {
    exprs <- parse(files[[file]], keep.source = TRUE)
    refs <- attr(exprs, "srcref")
    out <- integer()
    for (i in seq_along(exprs)) {
      e <- exprs[[i]]
      if (is.call(e) && as.character(e[[1]]) %in% c("<-", "=") &&
            is.call(e[[3]]) && identical(e[[3]][[1]], as.name("function"))) {
        name <- paste(file, deparse(e[[2]]))
        out[[name]] <- refs[[i]][3] - refs[[i]][1] + 1L
      }
    }
    out
  }), use.names = TRUE)
}

long_functions <- function(files, max) {
  lengths <- function_lengths(files)
  names(lengths)[lengths > max]
}

# The R files (topics) that have no tests/testthat/test-<topic>.R in
# `tests`: the package's documentation and .onLoad need none.
missing_tests <- function(files, tests) {
  topics <- sub("[.][Rr]$", "", basename(files))
  topics <- setdiff(topics, c("kerasmesh-package", "zzz"))
  topics[!file.exists(file.path(tests, paste0("test-", topics, ".R")))]
}

# Argument checkers are one family, check_*(), which check an argument (or
# a step's settings) and return it ready to use; as_*() makes a kerasmesh
# object of another form of it. The functions named as checkers outside
# the family: *_arg(), *_args(), parse_*() (renamed_arg(), which takes an
# argument's value from its deprecated name, checks nothing).
off_family_checkers <- function(files) {
  defined <- names(function_lengths(files))
  named <- sub("^\\S+ ", "", defined)
  defined[grepl("(_args?$|^parse_)", named) &
            !grepl("^check_", named) & named != "renamed_arg"]
}

test_that("only the bridge uses reticulate, and no R file names keras.src", {
  files <- source_files()
  # Code, not documentation; `py_` as a word start (not numpy_array()).
  uses <- vapply(files, function(f) {
    code <- grep("^\\s*#", readLines(f), value = TRUE, invert = TRUE)
    any(grepl("reticulate::|\\bpy_", code))
  }, logical(1))
  expect_identical(names(files)[uses], "python.R")
  names_keras_src <- vapply(files, function(f) {
    any(grepl("keras.src", readLines(f), fixed = TRUE))
  }, logical(1))
  expect_identical(names(files)[names_keras_src], character())
})

test_that("every R file has its test file", {
  expect_identical(missing_tests(source_files(), test_path()), character())
})

# Files past 350 lines and functions past 60 are listed for review (does
# it hold two topics? CONTRIBUTING.md), never refused.
test_that("R files and functions past the size for review are listed", {
  expect_gt(length(source_files()), 30)
  expect_gt(length(function_lengths(source_files())), 100)
  past <- c(long_files(source_files(), 350),
            long_functions(source_files(), 60))
  if (length(past) > 0) {
    cat("\nPast the size for review (two topics?):",
        paste(past, collapse = ", "), "\n")
  }
  succeed()
})

test_that("argument checkers are one family, check_*()", {
  expect_true("utils-checks.R check_whole" %in%
                names(function_lengths(source_files())))
  expect_identical(off_family_checkers(source_files()), character())
})

test_that("the shim's Python files, in every subpackage, are read", {
  files <- shim_files()
  expect_true("__init__.py" %in% names(files))
  expect_gt(length(files), 30)
  expect_true(all(c("core/kinds.py", "checkpoint/store.py") %in%
                    names(files)))
})

# --- the checks themselves -------------------------------------------------

write_lines <- function(lines, path) {
  dir.create(dirname(path), recursive = TRUE, showWarnings = FALSE)
  writeLines(lines, path)
}

test_that("a Python file over 400 lines in a subpackage is reported", {
  dir <- withr::local_tempdir()
  write_lines(rep("x = 1", 401), file.path(dir, "plan", "rules.py"))
  write_lines(rep("x = 1", 400), file.path(dir, "plan", "cost.py"))
  write_lines("", file.path(dir, "plan", "__pycache__", "rules.py"))
  files <- files_under(dir, "[.]py$")
  expect_named(files, c("plan/cost.py", "plan/rules.py"))
  expect_identical(long_files(files, 400), "plan/rules.py")
})

test_that("an R file over 350 lines or a function over 60 is reported", {
  dir <- withr::local_tempdir()
  body <- function(name, n) {
    c(paste(name, "<- function() {"), rep("  x <- 1", n - 2), "}")
  }
  write_lines(c(body("long", 61), body("short", 60)), file.path(dir, "a.R"))
  write_lines(rep("x <- 1", 351), file.path(dir, "b.R"))
  write_lines(rep("x <- 1", 350), file.path(dir, "c.R"))
  files <- files_under(dir, "[.][Rr]$")
  expect_identical(long_files(files, 350), "b.R")
  expect_identical(unname(function_lengths(files)), c(61L, 60L))
  expect_identical(long_functions(files, 60), "a.R long")
})

test_that("a checker named outside the check_*() family is reported", {
  dir <- withr::local_tempdir()
  write_lines(c("topology_arg <- function(x) x",
                "parse_rate <- function(x) x",
                "cost_levers_args <- function(x) x",
                "check_rate <- function(x) x",
                "as_device_mesh <- function(x) x",
                "check_shim_args <- function(x) x",
                "arg_text <- function(x) x"), file.path(dir, "a.R"))
  files <- files_under(dir, "[.][Rr]$")
  expect_identical(off_family_checkers(files), c(
    "a.R topology_arg", "a.R parse_rate", "a.R cost_levers_args"
  ))
})

test_that("an R file without its test file is reported", {
  dir <- withr::local_tempdir()
  for (name in c("R/plan.R", "R/zzz.R", "tests/test-cost.R", "R/cost.R")) {
    write_lines("", file.path(dir, name))
  }
  files <- files_under(file.path(dir, "R"), "[.][Rr]$")
  expect_identical(missing_tests(files, file.path(dir, "tests")), "plan")
})
