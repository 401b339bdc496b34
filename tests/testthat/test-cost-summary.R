# summary() of a layout cost by variable and by layer: pure R on the MLP's
# fixture with the shim's attribution of its collectives, then a real
# compile.

attributed_cost <- function() {
  desc <- fixture("cost-model-parallel")
  desc$attribution <- list(
    variables = list(
      path = list("sequential/dense/kernel", "sequential/dense_1/kernel",
                  "sequential/dense/bias", "sequential/dense_1/bias"),
      layer = list("sequential/dense", "sequential/dense_1",
                   "sequential/dense", "sequential/dense_1"),
      bytes = list(2048, 1024, 64, 16)),
    layers = list(layer = list("sequential/dense_1", "sequential/dense"),
                  bytes = list(5136, 2112)),
    total = 7284, to_variables = 3152, to_layers = 7248)
  kerasmesh:::new_layout_cost(desc)
}

test_that("summary() by variable gives each variable's bytes and share", {
  cost <- attributed_cost()
  s <- summary(cost, by = "variable")
  expect_s3_class(s, "kerasmesh_cost_traffic")
  expect_identical(names(s), c("variable", "layer", "bytes", "share"))
  expect_identical(s$bytes, c(2048, 1024, 64, 16))
  expect_equal(s$share, s$bytes / 7284)
  expect_identical(attr(s, "total"), sum(cost$collectives$bytes))
  expect_identical(attr(s, "attributed"), 3152)
  expect_snapshot(print(s))
  expect_snapshot(print(s, n = 2))
})

test_that("summary() by layer gives each layer's bytes, and what is left", {
  s <- summary(attributed_cost(), by = "layer")
  expect_identical(names(s), c("layer", "bytes", "share"))
  expect_identical(s$layer, c("sequential/dense_1", "sequential/dense"))
  expect_identical(attr(s, "attributed"), 7248)
  expect_snapshot(print(s))
  plain <- as.data.frame(s)
  expect_identical(class(plain), "data.frame")
  expect_null(attr(plain, "total"))
})

test_that("summary() without `by` is the list summary, print() unchanged", {
  cost <- attributed_cost()
  expect_identical(summary(cost), summary(unclass(cost)))
  before <- kerasmesh:::new_layout_cost(fixture("cost-model-parallel"))
  expect_identical(format(cost), format(before))
})

test_that("a cost without attribution or collectives summarises honestly", {
  # A cost described before attribution existed.
  desc <- fixture("cost-model-parallel")
  desc$attribution <- NULL
  old <- kerasmesh:::new_layout_cost(desc)
  s <- summary(old, by = "variable")
  expect_identical(nrow(s), 0L)
  expect_identical(attr(s, "total"), 7284)
  expect_snapshot(print(s))
  none <- kerasmesh:::new_layout_cost(fixture("cost-no-collectives"))
  expect_snapshot(print(summary(none, by = "layer")))
})

test_that("summary() of a cost checks `by` and its dots", {
  cost <- attributed_cost()
  expect_error(summary(cost, by = "rule"),
               class = "kerasmesh_error_argument")
  expect_snapshot(summary(cost, by = "rule"), error = TRUE)
  expect_error(summary(cost, "variable"), class = "kerasmesh_error_argument")
  # Two choices are not one (the default is NULL, not the choices).
  expect_error(summary(cost, by = c("variable", "layer")),
               class = "kerasmesh_error_argument")
  expect_snapshot(summary(cost, by = c("variable", "layer")), error = TRUE)
})

test_that("a summary of traffic edited by hand names the edited column", {
  traffic <- summary(attributed_cost(), by = "layer")
  traffic$bytes <- "x"
  expect_error(print(traffic), "`x$bytes` must be what `summary()` returns",
               fixed = TRUE, class = "kerasmesh_error_argument")
  traffic <- summary(attributed_cost(), by = "variable")
  traffic$share[[1]] <- 5
  expect_error(format(traffic), "`x$share`", fixed = TRUE,
               class = "kerasmesh_error_argument")
  expect_error(traffic[1:2, ], "`x$share`", fixed = TRUE,
               class = "kerasmesh_error_argument")
  # Rows are a summary again; a column alone, or rows bound, plain data.
  traffic <- summary(attributed_cost(), by = "variable")
  expect_length(format(traffic[1:2, ]), 6)
  expect_length(format(head(traffic, 1)), 5)
  expect_identical(class(traffic[, c("variable", "bytes")]), "data.frame")
  expect_identical(class(rbind(traffic, traffic)), "data.frame")
  expect_identical(traffic[["bytes"]], c(2048, 1024, 64, 16))
  expect_error(traffic[NA, ], "not there", class = "kerasmesh_error_argument")
})

test_that("layout_cost() attributes a model-parallel layer's traffic", {
  skip_if_no_keras()
  cost <- layout_cost(mlp_builder(), model_parallel(book_layout()),
                      batch_size = 16, optimizer = "adam", loss = "mse")
  v <- summary(cost, by = "variable")
  # Each kernel's gradient, all-reduced over "data": a quarter of it.
  expect_identical(v$bytes[v$variable == "sequential/dense/kernel"],
                   32 * 64 / 4 * 4)
  expect_setequal(v$layer, c("sequential/dense", "sequential/dense_1"))
  l <- summary(cost, by = "layer")
  # dense_1 gathers dense's output, split over "model".
  gathered <- sum(cost$ops$bytes[cost$ops$collective == "all-gather"])
  expect_gt(gathered, 0)
  expect_gte(l$bytes[l$layer == "sequential/dense_1"], gathered)
  expect_gt(attr(l, "attributed") / attr(l, "total"), 0.9)
  expect_lte(attr(v, "attributed"), attr(l, "attributed"))
})
