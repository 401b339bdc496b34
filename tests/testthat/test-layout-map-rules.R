# A layout map's rules, read and changed (R/layout-map-rules.R).

test_that("rules can be added with [[<- and [<- and removed with NULL", {
  skip_if_no_keras()
  lm <- layout_map(book_mesh())
  lm[["dense.*kernel"]] <- c(NA, "model")
  lm["dense.*bias"] <- list("model")
  lm["conv.*kernel"] <- list(NULL, NULL, NULL, "model")
  expect_identical(names(lm), c("dense.*kernel", "dense.*bias",
                                "conv.*kernel"))
  expect_identical(as.list(lm)[["conv.*kernel"]], c(NA, NA, NA, "model"))
  lm[["dense.*bias"]] <- NULL
  expect_identical(names(lm), c("dense.*kernel", "conv.*kernel"))
  lm[c("a", "b")] <- list("data", c(NA, "model"))
  expect_identical(names(lm)[3:4], c("a", "b"))
  # NULL for several keys removes them all, as a list's `[<-` does.
  lm[c("a", "dense.*kernel")] <- NULL
  expect_identical(names(lm), c("conv.*kernel", "b"))
})

test_that("[<- with several keys is one shim call, in the keys' order", {
  calls <- list()
  assign_rules <- with_shim(
    "[<-.kerasmesh_layout_map", function(name, ..., call = NULL) {
      calls[[length(calls) + 1]] <<- list(name = name, args = list(...))
      fixture("layout-map-book")
    }
  )
  out <- assign_rules(fixture_layout_map(), c("a", "b", "c"),
                      value = list("model", NULL, c(NA, "data")))
  expect_length(calls, 1)
  expect_identical(calls[[1]]$name, "layout.set_rules")
  expect_identical(calls[[1]]$args[[2]], list("a", "b", "c"))
  expect_identical(calls[[1]]$args[[3]],
                   list(list("model"), NULL, list(NULL, "data")))
  expect_s3_class(out, "kerasmesh_layout_map")
})

test_that("[<- with several keys adds and removes in order, as [[<- does", {
  skip_if_no_keras()
  lm <- layout_map(book_mesh(), a = "model", b = "data")
  lm[c("a", "c", "a")] <- list(NULL, c(NA, "model"), "data")
  expect_identical(names(lm), c("b", "c", "a"))
  expect_identical(as.list(lm)[["a"]], "data")
  expect_error(lm[c("d", "b")] <- list("model", "model"),
               class = "kerasmesh_error_layout_key_exists")
  err <- expect_error(lm[c("n1", "n1")] <- list("model", "data"),
                      class = "kerasmesh_error_layout_key_exists")
  expect_match(conditionMessage(err), 'Layout key "n1" must be given one')
  expect_match(conditionMessage(err), '("model") first, then ("data")',
               fixed = TRUE)
  expect_identical(names(lm), c("b", "c", "a"))
})

test_that("removing a rule that is not there is an error, not a no-op", {
  skip_if_no_keras()
  lm <- layout_map(book_mesh(), a = "model", b = "data")
  expect_error(lm[["typo"]] <- NULL, 'no rule "typo" to remove',
               class = "kerasmesh_error_layout_key_missing")
  # Said by the operator written.
  err <- expect_error(lm["typo"] <- NULL,
                      class = "kerasmesh_error_layout_key_missing")
  expect_identical(as.character(conditionCall(err)[[1]]), "[<-")
  expect_identical(names(lm[-1]), "b")
  # Rules picked by number or logical, as `lm[i]` picks them.
  expect_identical(names(lm[TRUE]), c("a", "b"))
  expect_length(lm[0], 0)
  first_gone <- lm
  first_gone[1] <- NULL
  expect_identical(names(first_gone), "b")
  none <- lm
  none[c(TRUE, TRUE)] <- NULL
  expect_length(none, 0)
  expect_error(lm[c("a", "typo")] <- NULL, "typo",
               class = "kerasmesh_error_layout_key_missing")
  expect_identical(names(lm), c("a", "b"))
})

test_that("indexing a layout map takes no other argument", {
  lm <- fixture_layout_map()
  expect_error(lm[[]], "`i` must be supplied",
               class = "kerasmesh_error_argument")
  expect_error(lm[] <- NULL, "must name the rules' keys",
               class = "kerasmesh_error_layout_key")
  expect_error(lm[[".*kernel", "x"]] <- NULL, "`...` must be empty",
               fixed = TRUE, class = "kerasmesh_error_argument")
  for (bad in list(c(-1, 2), 2.7, NA_real_, 99, c(TRUE, NA))) {
    expect_error(lm[bad], "The index of a layout map",
                 class = "kerasmesh_error_layout_key")
  }
  expect_identical(lm[], lm)
  for (twice in list(c(1, 1), rep(names(lm)[[1]], 2))) {
    expect_error(lm[twice], "must pick each one once",
                 class = "kerasmesh_error_layout_key")
  }
  expect_error(lm[c(1, 1)] <- list("model", "model"), "pick each one once",
               class = "kerasmesh_error_layout_key")
  expect_error(lm[[".*kernel", "x"]], class = "kerasmesh_error_argument")
  expect_error(lm[[".*kernel", exact = FALSE]], "exact",
               class = "kerasmesh_error_argument")
  expect_error(lm[names(lm)[[1]], drop = TRUE], "drop",
               class = "kerasmesh_error_argument")
  expect_error(as.list(lm, bogus = TRUE), "bogus",
               class = "kerasmesh_error_argument")
  rules <- as.data.frame(lm)
  expect_identical(rules$key, names(lm))
  expect_identical(rules$axes, unname(as.list(lm)))
})

test_that("layout maps have value semantics", {
  skip_if_no_keras()
  lm <- layout_map(book_mesh(), "dense.*kernel" = c(NA, "model"))
  copy <- lm
  copy[["dense.*bias"]] <- "model"
  expect_identical(length(lm), 1L)
  expect_identical(length(copy), 2L)
  expect_identical(length(reticulate::r_to_py(lm)), 1L)
  # A rule changed in Python changes a copy, not the map R describes.
  py <- reticulate::r_to_py(lm)
  reticulate::py_del_item(py, "dense.*kernel")
  expect_identical(length(py), 0L)
  expect_identical(lm[["dense/kernel"]], c(NA, "model"))
  expect_identical(length(reticulate::r_to_py(lm)), 1L)
})

test_that("[[ resolves a path as Keras does", {
  skip_if_no_keras()
  lm <- layout_map(book_mesh(),
                   "dense.*kernel" = c(NA, "model"),
                   "dense/bias" = "model")
  expect_identical(lm[["dense_1/kernel"]], c(NA, "model"))
  expect_identical(lm[["dense/bias"]], "model")
  # fullmatch: a rule must match the whole path
  expect_null(lm[["sequential/dense/kernel"]])
  expect_null(lm[["conv2d/kernel"]])
  py <- reticulate::r_to_py(lm)
  expect_identical(
    py$`__getitem__`("dense_1/kernel")$axes,
    list(NULL, "model")
  )
})

test_that("a path matching several rules is an error, as in Keras", {
  skip_if_no_keras()
  lm <- layout_map(book_mesh(), ".*kernel" = c(NA, "model"),
                   "dense.*" = c("model", NA))
  expect_error(lm[["dense/kernel"]], class = "kerasmesh_error_layout_ambiguous")
  expect_snapshot(lm[["dense/kernel"]], error = TRUE)
})

test_that("a layout map's rules read as a named list, without Python", {
  lm <- fixture_layout_map()
  expect_identical(names(lm), c(".*dense.*kernel", ".*dense.*bias"))
  expect_identical(length(lm), 2L)
  expect_identical(as.list(lm), list(".*dense.*kernel" = c(NA, "model"),
                                     ".*dense.*bias" = "model"))
  empty <- fixture_layout_map("layout-map-empty")
  expect_identical(length(empty), 0L)
  expect_identical(names(empty), character())
  expect_snapshot(print(empty))
})

test_that("rule keys and assigned layouts of the wrong R type are refused", {
  lm <- fixture_layout_map()
  expect_error(lm[[1]], class = "kerasmesh_error_layout_key")
  expect_error(lm[[NA_character_]], class = "kerasmesh_error_layout_key")
  expect_error(lm[[c("a", "b")]], class = "kerasmesh_error_layout_key")
  expect_error(lm[[""]], class = "kerasmesh_error_layout_key")
  expect_error(lm[["  "]] <- "model", "not blank",
               class = "kerasmesh_error_layout_key")
  expect_error(lm[[2]] <- "model", class = "kerasmesh_error_layout_key")
  expect_error(lm[c("a", "b")] <- "model",
               class = "kerasmesh_error_layout_axes")
  expect_error(lm[c("a", "b")] <- list("model"),
               class = "kerasmesh_error_layout_axes")
  expect_error(lm["nope"], class = "kerasmesh_error_layout_key")
  expect_error(lm[["a"]] <- 1, class = "kerasmesh_error_layout_axes")
  expect_error(lm["a"] <- list(NA, 2), class = "kerasmesh_error_layout_axes")
  expect_snapshot(error = TRUE, {
    lm[[1]]
    lm[c("a", "b")] <- "model"
    lm[c(".*dense.*bias", "nope", "nada")]
  })
})

test_that("a number is no rule path", {
  expect_error(fixture_layout_map()[[1]], "a single string.", fixed = TRUE,
               class = "kerasmesh_error_layout_key")
})
