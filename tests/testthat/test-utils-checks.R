test_that("check_whole() returns integers within its range", {
  expect_identical(check_whole(3), 3L)
  expect_identical(check_whole(0, min = 0), 0L)
  expect_identical(check_whole(.Machine$integer.max), .Machine$integer.max)
  expect_identical(check_whole(8, max = 8), 8L)
})

test_that("check_whole() refuses what an integer or the use can't hold", {
  for (bad in list(3e9, .Machine$integer.max + 1, 2.5, NA, Inf, "3", 1:2,
                   NULL, TRUE, 0, -1)) {
    expect_error(check_whole(bad), class = "kerasmesh_error_argument")
  }
  expect_error(check_whole(-1, min = 0), class = "kerasmesh_error_argument")
  expect_error(check_whole(9, max = 8), class = "kerasmesh_error_argument")
  n <- 3e9
  expect_snapshot(check_whole(n), error = TRUE)
  expect_snapshot(check_whole(n, min = 0, max = 10), error = TRUE)
  offset <- -2
  expect_snapshot(check_whole(offset, min = 0), error = TRUE)
})

test_that("check_choice() takes the first default or one of the choices", {
  expect_identical(check_choice(c("a", "b"), c("a", "b")), "a")
  expect_identical(check_choice("b", c("a", "b")), "b")
  expect_error(check_choice(c("a", "b"), c("a", "b"), all_means_first = FALSE),
               class = "kerasmesh_error_argument")
  for (bad in list("c", c("a", "b", "c"), NA_character_, 1, NULL)) {
    expect_error(check_choice(bad, c("a", "b")),
                 class = "kerasmesh_error_argument")
  }
})

test_that("stop_input_type() words the problem, what was received, a way out", {
  n <- 3
  err <- tryCatch(
    stop_input_type(2.5, "a whole number below {n}", way_out = "Round it.",
                    kind = c("axis_names", "argument"), arg = "size"),
    error = function(e) e
  )
  expect_s3_class(err, c("kerasmesh_error_axis_names",
                         "kerasmesh_error_argument", "kerasmesh_error"))
  # testthat's output has ASCII bullets.
  expect_identical(
    strsplit(cli::ansi_strip(conditionMessage(err)), "\n")[[1]],
    c("`size` must be a whole number below 3.",
      "x Received a number (2.5).", "i Round it.")
  )
  err <- tryCatch(
    stop_input_type("x", subject = "The key", problem = "No {.val {n}}.",
                    received = "It is", show_value = FALSE),
    error = function(e) e
  )
  expect_identical(cli::ansi_strip(conditionMessage(err)),
                   "No 3.\nx It is a string.")
})

test_that("a value cli already names is not shown twice", {
  received <- function(x) {
    err <- tryCatch(stop_input_type(x, "a number"), error = identity)
    strsplit(cli::ansi_strip(conditionMessage(err)), "\n")[[1]][[2]]
  }
  expect_identical(received(NA), "x Received `NA`.")
  expect_identical(received(NA_character_), "x Received a character `NA`.")
  expect_identical(received(TRUE), "x Received `TRUE`.")
  expect_identical(received(""), 'x Received `""`.')
  expect_identical(received(c(NA, 1)), "x Received a double vector (NA, 1).")
  expect_identical(received("a"), 'x Received a string ("a").')
})

test_that("check_whole() and check_number() pass NULL only where allowed", {
  expect_null(check_whole(NULL, allow_null = TRUE))
  expect_null(check_number(NULL, "a number", allow_null = TRUE))
  expect_error(check_number(NULL, "a number"),
               class = "kerasmesh_error_argument")
  expect_identical(check_number(1L, "a number"), 1)
  expect_identical(check_number(Inf, "a number", min = 0), Inf)
  expect_error(check_number(0, "a positive number", min = 0,
                            exclusive_min = TRUE),
               class = "kerasmesh_error_argument")
  expect_error(check_number(1.5, "a share", max = 1),
               class = "kerasmesh_error_argument")
})

test_that("an on-off option is TRUE or FALSE, its default when unset", {
  withr::local_options(kerasmesh.some_flag = NULL)
  expect_true(option_flag("kerasmesh.some_flag", TRUE))
  for (bad in list("maybe", NA, c(TRUE, FALSE), 1)) {
    withr::local_options(kerasmesh.some_flag = bad)
    expect_error(option_flag("kerasmesh.some_flag", TRUE),
                 '`getOption("kerasmesh.some_flag")` must be TRUE or FALSE',
                 fixed = TRUE, class = "kerasmesh_error_argument")
  }
  withr::local_options(kerasmesh.some_flag = FALSE)
  expect_false(option_flag("kerasmesh.some_flag", TRUE))
})

test_that("check_call() refuses dots and names what is left out", {
  f <- function(x, y = 1, ...) {
    check_call()
    x
  }
  expect_identical(f(2), 2)
  err <- expect_error(f(), "`x` must be supplied", fixed = TRUE,
                      class = "kerasmesh_error_argument")
  expect_identical(deparse(err$call), "f()")
  err <- expect_error(f(1, z = 3), "z = 3", fixed = TRUE,
                      class = "kerasmesh_error_argument")
  expect_identical(deparse(err$call), "f(1, z = 3)")
})

test_that("a limit's option is a number of at least 1, a default when unset", {
  withr::local_options(kerasmesh.some_limit = NULL)
  expect_identical(option_number("kerasmesh.some_limit", 8), 8)
  for (bad in list("many", NA, c(2, 3), 0, -1, TRUE)) {
    withr::local_options(kerasmesh.some_limit = bad)
    expect_error(option_number("kerasmesh.some_limit", 8),
                 '`getOption("kerasmesh.some_limit")` must be a positive',
                 fixed = TRUE, class = "kerasmesh_error_argument")
  }
  withr::local_options(kerasmesh.some_limit = Inf)
  expect_identical(option_number("kerasmesh.some_limit", 8), Inf)
})

test_that("check_index() picks positions as a list's `[` does, or refuses", {
  expect_identical(check_index(c(3, 1), 3, "numbers"), c(3L, 1L))
  expect_identical(check_index(-2, 3, "numbers"), c(1L, 3L))
  expect_identical(check_index(c(TRUE, FALSE, TRUE), 3, "numbers"), c(1L, 3L))
  expect_identical(check_index(TRUE, 3, "numbers"), 1:3)
  expect_identical(check_index(0, 3, "numbers"), integer())
  expect_identical(check_index(2, 3, "a number", single = TRUE), 2L)
  expect_identical(check_index(c("a", "b"), 3, "keys", keys = TRUE),
                   c("a", "b"))
  for (bad in list(4, -4, c(-1, 1), 1.5, NA, Inf, c(TRUE, FALSE), "a",
                   list(1), NULL)) {
    expect_error(check_index(bad, 3, "numbers from 1 to {n}"),
                 "The index must be numbers from 1 to 3.", fixed = TRUE,
                 class = "kerasmesh_error_argument")
  }
  for (bad in list(0, c(1, 2), -1)) {
    expect_error(check_index(bad, 3, "a number", single = TRUE),
                 class = "kerasmesh_error_argument")
  }
  expect_error(check_index(NA_character_, 3, "keys", keys = TRUE),
               class = "kerasmesh_error_argument")
  for (twice in list(c(1, 1), c(-2, -2), c("a", "a"))) {
    expect_error(check_index(twice, 3, "numbers", keys = TRUE),
                 "The index must pick each one once.", fixed = TRUE,
                 class = "kerasmesh_error_argument")
  }
  expect_identical(check_index(c(0, 2, 0), 3, "numbers"), 2L)
})

test_that("check_whole(what =) words every failure, above `max` too", {
  last <- 3
  for (bad in list(-1, 4, 2.5, "1")) {
    err <- tryCatch(
      check_whole(bad, min = 0, max = last, what = "from 0 to {last}"),
      error = function(e) e
    )
    expect_s3_class(err, "kerasmesh_error_argument")
    expect_match(conditionMessage(err), "`bad` must be from 0 to 3.",
                 fixed = TRUE)
  }
  expect_identical(check_whole(3, min = 0, max = last, what = "from 0"), 3L)
})

test_that("every picture takes a title of one string, or NULL", {
  for (main in list(c("a", "b"), 1:3, NA_character_)) {
    expect_error(plot(fixture_cost(), main = main), "`main`",
                 class = "kerasmesh_error_argument")
    expect_error(plot(fixture_comparison(), main = main), "`main`",
                 class = "kerasmesh_error_argument")
    expect_error(plot(fixture_mesh(), main = main), "`main`",
                 class = "kerasmesh_error_argument")
    expect_error(plot(fixture_picture(), main = main), "`main`",
                 class = "kerasmesh_error_argument")
    expect_error(plot(fixture_search(), main = main), "`main`",
                 class = "kerasmesh_error_argument")
  }
})

test_that("every function says which argument without a default is missing", {
  ns <- asNamespace("kerasmesh")
  deprecated <- c("checkpoint_callback", "format_bytes")
  for (f in deprecated) {
    expect_error(suppressWarnings(get(f, asNamespace("kerasmesh"))()),
                 "must be supplied", class = "kerasmesh_error_argument")
  }
  # layout_map() finds its mesh among the rules: "`mesh` must be a mesh".
  expect_error(layout_map(), "`mesh`", class = "kerasmesh_error_device_mesh")
  checked <- 0
  exports <- setdiff(getNamespaceExports("kerasmesh"),
                     c(deprecated, "layout_map"))
  for (name in exports) {
    fn <- get(name, envir = ns)
    formals <- formals(fn)
    required <- names(formals)[vapply(formals, rlang::is_missing, TRUE)]
    required <- setdiff(required, "...")
    if (!length(required)) next
    err <- tryCatch(fn(), error = identity)
    expect_s3_class(err, "kerasmesh_error_argument")
    expect_match(conditionMessage(err), "must be supplied", fixed = TRUE,
                 info = name)
    checked <- checked + 1
  }
  expect_gt(checked, 20)
})
