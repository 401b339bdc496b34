test_that("sizes parse as bytes in powers of 1000 or 1024", {
  bytes <- function(x) as.numeric(check_bytes(x))
  expect_identical(bytes("80GB"), 80e9)
  expect_identical(bytes("16 GiB"), 16 * 2^30)
  expect_identical(bytes("512mb"), 512e6)
  expect_identical(bytes("1.5 TB"), 1.5e12)
  expect_identical(bytes(2e9), 2e9)
  expect_identical(bytes("1000"), 1000)
  expect_null(check_bytes(NULL))
  # A size's lowercase b is a byte (a rate's is a bit), and the units say so.
  expect_identical(bytes("80Gb"), 80e9)
  expect_identical(check_rate("400Gb/s"), 50e9)
  expect_error(check_bytes("80 GX"), "a size counts bytes",
               class = "kerasmesh_error_argument")
})

test_that("a size under one byte is refused, and a fraction prints as one", {
  for (x in list("0.5B", 0.5, "0.0001kB")) {
    expect_error(check_bytes(x, arg = "memory"),
                 "`memory` must be at least one byte",
                 class = "kerasmesh_error_argument")
  }
  expect_identical(as.numeric(check_bytes("1B")), 1)
  expect_identical(bytes_text(c(0.5, 0.0123)), c("0.5 B", "0.0123 B"))
})

test_that("a bad size is a classed error that lists the units", {
  for (x in list("80 GX", c(1, 2), NA, TRUE)) {
    expect_error(check_bytes(x), "Units: B, kB",
                 class = "kerasmesh_error_argument")
  }
  # A number or written as a size, but not a positive, finite one: said so.
  for (x in list("0GB", "1e400GB", "0", -1, 0, Inf)) {
    expect_error(check_bytes(x), "must be a positive, finite size",
                 class = "kerasmesh_error_argument")
  }
  expect_error(check_rate("0GB/s"), "must be a positive, finite rate",
               class = "kerasmesh_error_argument")
  expect_error(check_rate("0.1b/s"), "at least one byte per second",
               class = "kerasmesh_error_argument")
  # A number under a byte a second too, as its string would be.
  expect_error(check_rate(0.5), "at least one byte per second",
               class = "kerasmesh_error_argument")
  expect_identical(check_rate(1), 1)
  expect_error(check_bytes(NULL, allow_null = FALSE),
               class = "kerasmesh_error_argument")
  expect_snapshot(check_bytes("80 GX", arg = "memory"), error = TRUE)
})

test_that("Inf means no limit only where a caller allows it", {
  expect_identical(check_bytes(Inf, allow_inf = TRUE),
                   structure(Inf, label = "none"))
})

test_that("sizes keep what the user wrote as their label", {
  expect_null(check_bytes(NULL))
  limit <- check_bytes(" 16GiB ")
  expect_equal(as.numeric(limit), 16 * 2^30)
  expect_identical(attr(limit, "label"), "16GiB")
  expect_identical(attr(check_bytes(2e9), "label"), "2 GB")
})

test_that("bytes_text() writes bytes as the shim's messages do", {
  # One table for both: the shim's bytes_text() is tested against it too
  # (tests/python/test_core_text.py).
  table <- utils::read.csv(testthat::test_path("fixtures", "bytes-text.csv"),
                           colClasses = c("numeric", "character"))
  expect_gt(nrow(table), 10)
  expect_identical(bytes_text(table$bytes), table$text)
})

test_that("bytes_text() uses powers of 1000", {
  expect_identical(bytes_text(c(512, 2048, 6.2e9)),
                   c("512 B", "2.05 kB", "6.2 GB"))
})

test_that("bytes_text() rounds to 3 digits and keeps NA", {
  expect_identical(bytes_text(c(0, 999, 1000, 1e6, 1.5e12, 3e18)),
                   c("0 B", "999 B", "1 kB", "1 MB", "1.5 TB", "3000 PB"))
  expect_identical(bytes_text(c(999.4, 999.6, 999999, 999.5e6)),
                   c("999 B", "1 kB", "1 MB", "1 GB"))
  expect_identical(bytes_text(NA), NA_character_)
  expect_identical(bytes_text(numeric()), character())
})

test_that("format_bytes() still works, with a deprecation warning", {
  expect_warning(out <- format_bytes(c(512, 2048)),
                 class = "kerasmesh_warning_deprecated")
  expect_identical(out, c("512 B", "2.05 kB"))
  expect_snapshot(format_bytes(1e9))
})

test_that("print-outs, pictures, comparisons and searches judge fit by need", {
  # XLA's figure (`need`) above the memory, the parts' sum below it: each
  # place that says whether a layout fits goes by `need`.
  cost <- fixture_cost()
  cost$need <- 2 * cost$memory[["total"]]
  cost <- as_made(cost)
  memory <- check_bytes(1.5 * cost$memory[["total"]])
  expect_match(format(cost, memory = as.numeric(memory)), "does not fit",
               fixed = TRUE, all = FALSE)
  cmp <- new_layout_comparison(list(mp = cost), memory)
  expect_false(cmp$fits)
  expect_match(cost_subtitle(cmp, memory), "no layout fits", fixed = TRUE,
               all = FALSE)
  found <- fixture_search()
  found$cost <- cost
  expect_identical(search_found(found)$memory, cost$need)
  # A plan's `need` against its total per device the same way.
  plan <- fixture_plan()
  summary <- attr(plan, "summary")
  summary$need <- 2 * summary$device_total
  memory <- check_bytes(1.5 * summary$device_total)
  expect_match(plan_plot_subtitle(summary, attr(plan, "mesh"), "total",
                                  memory),
               "the plan's .* does not fit;", all = FALSE)
  summary$need <- summary$device_total / 2
  expect_match(plan_plot_subtitle(summary, attr(plan, "mesh"), "total",
                                  memory),
               "the plan's .* fits;", all = FALSE)
})
