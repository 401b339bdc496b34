# The console table renderer is pure R: no Python needed.

format_table <- function(...) kerasmesh:::format_table(...)

test_that("a data frame prints under its names, indented, some columns right", {
  table <- data.frame(name = c("weights", "total"), bytes = c("4 kB", "12 kB"),
                      stringsAsFactors = FALSE)
  expect_identical(format_table(table), c(
    "  name     bytes",
    "  weights  4 kB",
    "  total    12 kB"
  ))
  expect_identical(format_table(table, right = "bytes"), c(
    "  name     bytes",
    "  weights   4 kB",
    "  total    12 kB"
  ))
  expect_identical(format_table(table, right = 1, indent = "", sep = " "), c(
    "   name bytes",
    "weights 4 kB",
    "  total 12 kB"
  ))
})

test_that("numbers and missing values print as text", {
  table <- data.frame(n = c(1.5, NA), s = c(NA, "x"), stringsAsFactors = FALSE)
  expect_identical(format_table(table, indent = ""),
                   c("n    s", "1.5  NA", "NA   x"))
})

test_that("lines lose trailing spaces; a table without rows is its header", {
  table <- data.frame(a = c("x", "yyyy"), b = c("", ""),
                      stringsAsFactors = FALSE)
  lines <- format_table(table)
  expect_false(any(grepl(" $", lines)))
  expect_identical(format_table(table[0, ]), "  a  b")
})

test_that("row labels come first, then the header-aligned cells", {
  cells <- matrix(c("cpu:0", "cpu:1", "cpu:2", "cpu:3"), 2)
  lines <- format_table(cells, header = c("m[0]", "m[1]"),
                        row_labels = c("d[0]", "d[1]"), sep = " ",
                        indent = "")
  expect_identical(lines, c(
    "      m[0]  m[1]",
    "d[0]  cpu:0 cpu:2",
    "d[1]  cpu:1 cpu:3"
  ))
})

test_that("empty or absent headers print no header line", {
  cells <- matrix(c("a", "b"), 1)
  expect_identical(format_table(cells, indent = ""), "a  b")
  expect_identical(format_table(cells, header = c("", ""), indent = ""),
                   "a  b")
})

test_that("columns that do not fit go to bands, each with the labels", {
  cells <- matrix(sprintf("device:%02d", 0:11), 2)
  lines <- format_table(cells, header = paste0("c", 0:5),
                        row_labels = c("r0", "r1"), sep = " ",
                        indent = "", width = 40)
  expect_true(all(nchar(lines) <= 40))
  bands <- split(lines, cumsum(lines == ""))
  expect_length(bands, 2)
  expect_identical(lengths(bands), c(`0` = 3L, `1` = 4L))
  expect_match(bands[[2]][[2]], "^ +c3 +c4 +c5$")
  expect_true(all(sprintf("device:%02d", 0:11) %in%
                    unlist(strsplit(lines, " +"))))
})

test_that("a box rules every cell and is as tall as its tallest cell", {
  withr::local_options(cli.unicode = FALSE)
  cells <- matrix(c("a\nb", "c", "", "d"), 2)
  lines <- format_table(cells, header = c("x", "y"), row_labels = c("1", "2"),
                        label_sep = " ", box = TRUE, indent = "")
  expect_identical(lines, c(
    "   x   y",
    "  +---+---+",
    "1 | a |   |",
    "  | b |   |",
    "  +---+---+",
    "2 | c | d |",
    "  +---+---+"
  ))
})

test_that("box bands fit the width; every column is at least min_width", {
  withr::local_options(cli.unicode = TRUE)
  cells <- matrix(as.character(1:6), 1)
  lines <- format_table(cells, header = paste0("c", 1:6), box = TRUE,
                        min_width = 4, indent = "", width = 22)
  expect_true(all(nchar(lines) <= 22))
  expect_identical(sum(lines == ""), 1L)
  rule <- paste(rep(strrep("\u2500", 6), 3), collapse = "\u252c")
  expect_identical(lines[[2]], paste0("\u250c", rule, "\u2510"))
})

test_that("columns split greedily, never leaving a band empty", {
  expect_identical(kerasmesh:::split_columns(c(5, 5, 5), 11),
                   list(1:2, 3L))
  expect_identical(kerasmesh:::split_columns(c(5, 5, 5), 11, gap = 0),
                   list(1:2, 3L))
  expect_identical(kerasmesh:::split_columns(c(5, 5, 5), 10, gap = 0),
                   list(1:2, 3L))
  expect_identical(kerasmesh:::split_columns(c(20, 5), 10), list(1L, 2L))
  expect_identical(kerasmesh:::split_columns(integer(), 10), list(integer()))
})

test_that("text pads to a width on either side", {
  expect_identical(kerasmesh:::pad_right(c("a", "abc"), 3), c("a  ", "abc"))
  expect_identical(kerasmesh:::pad_right("abcd", 2), "abcd")
  expect_identical(kerasmesh:::pad_left(c("a", "abc"), 3), c("  a", "abc"))
})
