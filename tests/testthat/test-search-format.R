test_that("a found layout is printed as R code for layout_map()", {
  code <- search_code(list(
    "dense/kernel" = c(NA, "model"), ".*bias" = NA,
    "emb" = c("model", "batch")
  ))
  expect_equal(code, c(
    "layout_map(", "  mesh,",
    '  "dense/kernel" = c(NA, "model"),',
    '  ".*bias" = NA,',
    '  "emb" = c("model", "batch")',
    ")"
  ))
  # It parses, keys and axes as given.
  expect_true(is.call(parse(text = paste(code, collapse = "\n"))[[1]]))
  # No rule: whatever the mesh, no variable is split (a data axis of 1
  # is no data parallelism).
  expect_match(search_code(list()), "no rule: every variable whole",
               fixed = TRUE)
})

test_that("a search prints its costs beside data parallel's", {
  skip_if_no_keras()
  found <- within_seconds(small_search(memory = "1MB"), 120)
  text <- format(found)
  expect_match(text[1],
               "configurations predicted of 7 layouts \\(exhaustive\\)")
  expect_true(any(grepl("^  found .*verified by XLA", text)))
  expect_true(any(grepl("^  data parallel ", text)))
  expect_true(any(grepl("budget 1 MB", text)))
  # The verified cost's traffic, by variable.
  top <- summary(found$cost, by = "variable")
  expect_gt(nrow(top), 0)
  at <- grep("^Most traffic by variable", text)
  expect_length(at, 1)
  expect_match(text[at + 1], top$variable[1], fixed = TRUE)
  expect_output(print(found), "layout_map\\(")
})

test_that("a search prints the found layout as code, beside data parallel", {
  expect_snapshot(print(fixture_search()))
})

test_that("a search says how many layouts it spared compiling", {
  found <- fixture_search()
  expect_false(any(grepl("not compiled", format(found))))
  found$pruned <- 3
  expect_true(any(grepl(
    "^3 more layouts not compiled: their weights alone break it\\.$",
    format(found)
  )))
})

test_that("a search prints a large space in full, never negative", {
  found <- fixture_search()
  # What the shim sends for 15,332,469,805,107 layouts: a double, since
  # reticulate 1.28 wraps larger integers around.
  found$space_size <- 15332469805107
  found$candidates <- found$candidates[c(1, 2, 2), ]
  found <- as_made(found)
  expect_match(format(found)[1],
               "3 configurations predicted of 15,332,469,805,107 layouts",
               fixed = TRUE)
})

test_that("a search out of time before its full compile says so", {
  found <- fixture_search()
  found$predicted <- list(memory = 2e9, traffic = 1.5e9)
  found$cost <- NULL
  found$verified <- FALSE
  found$stopped <- "timeout"
  found$blocks <- 32
  found$depths <- list(1, 2)
  found <- as_made(found)
  expect_snapshot(print(found))
  expect_equal(search_points(found)$memory[1], 2e9)
  path <- withr::local_tempfile(fileext = ".png")
  grDevices::png(path)
  on.exit(grDevices::dev.off(), add = TRUE)
  expect_identical(plot(found), found)
})

test_that("a partial search says what it left out", {
  found <- fixture_search()
  found$unprofiled <- data.frame(mesh = "2x4", layout = "tensor parallel",
                                 remat = "full", stringsAsFactors = FALSE)
  found$stopped <- "timeout"
  found <- as_made(found)
  text <- format(found)
  expect_true(any(grepl("^Partial: the time ran out before 1 part of the",
                        text)))
})

test_that("why a configuration won reads as its rivals, lever by lever", {
  found <- fixture_search()
  expect_true(any(grepl("^Why this one", format(found))))
  rival <- found$why$levers[1, ]
  rival$fits <- FALSE
  found$why <- list(binds = "memory", faster = rival,
                    levers = found$why$levers)
  found <- as_made(found)
  text <- format(found)
  expect_true(any(grepl("memory binds", text)))
  expect_true(any(grepl("\\(over budget\\)$", text)))
})

test_that("a search's counts agree with their nouns", {
  expect_identical(kerasmesh:::format_cache_hits(list(hits = 1L)),
                   ", 1 figure read from the cache")
  expect_identical(kerasmesh:::format_cache_hits(list(hits = 3L)),
                   ", 3 figures read from the cache")
  found <- fixture_search()
  found$space_size <- 1
  found <- kerasmesh:::stamp_fields(found)
  expect_match(format(found)[[1]], "predicted of 1 layout (", fixed = TRUE)
})
