# The package's R source as a whole: one bridge to Python, each file its
# test file, files and functions short enough to read in one sitting.

# R/ of the package being tested: the source tree under test_local(), the
# copy R CMD check keeps in kerasmesh.Rcheck/00_pkg_src/ under R CMD check.
source_dir <- function() {
  candidates <- c(
    test_path("..", "..", "R"),
    test_path("..", "..", "00_pkg_src", "kerasmesh", "R")
  )
  found <- candidates[dir.exists(candidates)]
  if (length(found) == 0) {
    skip("the package's R sources are not next to its tests")
  }
  found[[1]]
}

source_files <- function() {
  files <- list.files(source_dir(), pattern = "[.]R$", full.names = TRUE)
  stats::setNames(files, basename(files))
}

# Lines of each top-level function, named "file name".
function_lengths <- function() {
  unlist(lapply(source_files(), function(path) {
    exprs <- parse(path, keep.source = TRUE)
    refs <- attr(exprs, "srcref")
    out <- integer()
    for (i in seq_along(exprs)) {
      e <- exprs[[i]]
      if (is.call(e) && as.character(e[[1]]) %in% c("<-", "=") &&
            is.call(e[[3]]) && identical(e[[3]][[1]], as.name("function"))) {
        name <- paste(basename(path), deparse(e[[2]]))
        out[[name]] <- refs[[i]][3] - refs[[i]][1] + 1L
      }
    }
    out
  }), use.names = TRUE)
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
  topics <- sub("[.]R$", "", names(source_files()))
  topics <- setdiff(topics, c("kerasmesh-package", "zzz"))
  tests <- file.path(test_path(), paste0("test-", topics, ".R"))
  expect_identical(topics[!file.exists(tests)], character())
})

test_that("no R file is over 350 lines and no function over 60", {
  sizes <- vapply(source_files(), function(f) length(readLines(f)), 1L)
  expect_identical(names(sizes)[sizes > 350], character())
  lengths <- function_lengths()
  expect_gt(length(lengths), 100)
  expect_identical(names(lengths)[lengths > 60], character())
})
