test_that("the cache lives where the option says, else in R's user dir", {
  withr::local_options(kerasmesh.cache_dir = NULL)
  expect_equal(search_cache_dir(), tools::R_user_dir("kerasmesh", "cache"))
  withr::local_options(kerasmesh.cache_dir = "~/elsewhere")
  expect_equal(search_cache_dir(), path.expand("~/elsewhere"))
  withr::local_options(kerasmesh.cache_dir = 3)
  expect_error(search_cache_dir(), class = "kerasmesh_error_argument")
  afile <- withr::local_tempfile(lines = "x")
  withr::local_options(kerasmesh.cache_dir = afile)
  expect_error(search_cache_dir(),
               '`getOption("kerasmesh.cache_dir")` must be a directory',
               fixed = TRUE, class = "kerasmesh_error_argument")
  expect_error(check_search_cache(TRUE), "kerasmesh.cache_dir",
               class = "kerasmesh_error_argument")
  expect_error(check_search_cache(afile), "`cache` must be a directory",
               fixed = TRUE, class = "kerasmesh_error_argument")
})

test_that("a repeated search reads its figures from the cache", {
  skip_if_no_keras()
  dir <- withr::local_tempdir()
  cold <- within_seconds(small_search(cache = dir), 120)
  warm <- within_seconds(small_search(cache = dir), 120)
  expect_equal(cold$cache$hits, 0)
  # The profile's 7 compiles and the full-depth one, all kept.
  expect_equal(warm$cache$hits, 8)
  expect_equal(warm$compiles, 0)
  expect_equal(as.list(as_layout_map(warm)), as.list(as_layout_map(cold)))
  expect_equal(warm$cost$need, cold$cost$need)
  expect_true(any(grepl("8 figures read from the cache", format(warm))))
  expect_message(removed <- clear_search_cache(dir),
                 class = "kerasmesh_message_search_cache")
  expect_equal(removed, 8)
  off <- within_seconds(small_search(cache = FALSE), 120)
  expect_null(off$cache$directory)
  expect_error(small_search(cache = NA), class = "kerasmesh_error_argument")
  expect_error(small_search(cache = c("a", "b")),
               class = "kerasmesh_error_argument")
  withr::local_dir(withr::local_tempdir())
  expect_error(small_search(cache = "  "), "a directory's name",
               class = "kerasmesh_error_argument")
  expect_length(dir(all.files = TRUE, no.. = TRUE), 0)
})

test_that("an unwritable cache is said once, and the search goes on", {
  skip_if_no_keras()
  # A directory below a file (unwritable even for root).
  file <- withr::local_tempfile()
  writeLines("not a directory", file)
  found <- within_seconds(small_search(cache = file.path(file, "cache")),
                          120)
  expect_s3_class(found, "kerasmesh_layout_search")
  expect_match(found$cache$note, "can't be written")
  expect_true(any(grepl("^Cache: ", format(found))))
  # The file itself given as the directory: refused, left as it was.
  expect_error(small_search(cache = file), "a file",
               class = "kerasmesh_error_argument")
  expect_identical(readLines(file), "not a directory")
})

test_that("clearing a file instead of the cache's directory is refused", {
  skip_if_no_keras()
  file <- withr::local_tempfile()
  writeLines("not a directory", file)
  err <- expect_error(clear_search_cache(file),
                      class = "kerasmesh_error_argument")
  expect_match(conditionMessage(err), "`dir` must be a directory",
               fixed = TRUE)
  expect_match(conditionMessage(err), basename(file), fixed = TRUE)
  expect_identical(readLines(file), "not a directory")
})
