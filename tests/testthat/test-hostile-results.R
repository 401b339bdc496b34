# Silent wrong results from issue 21's red team: each now gives valid
# output or a classed error naming what was received.

test_that("layout_fix() writes code that parses for any name", {
  plan <- fixture_plan("plan-errors")
  for (name in c("my map", "if", "TRUE", "a`b", "x\\y", "_lm", "2lm")) {
    code <- layout_fix(plan, name = name)
    expect_gt(length(code), 0)
    exprs <- parse(text = code, keep.source = FALSE)
    # Every line assigns into the map called `name`.
    targets <- vapply(exprs, function(e) as.character(e[[2]][[2]]), "")
    expect_identical(unique(targets), name)
  }
  expect_match(layout_fix(plan, name = "my map")[1], "^`my map`\\[\\[")
  expect_match(layout_fix(plan, name = "lm2")[1], "^lm2\\[\\[")
})

# A Keras LayoutMap made without kerasmesh, holding `key`.
keras_layout_map_with <- function(key) {
  keras_map <- keras()$distribution$LayoutMap(reticulate::r_to_py(book_mesh()))
  reticulate::py_set_item(keras_map, key, reticulate::tuple(NULL, "model"))
  keras_map
}

test_that("a backtracking key in a Keras LayoutMap is refused everywhere", {
  skip_if_no_keras()
  within_seconds({
    keras_map <- keras_layout_map_with("(a+)+b")
    expect_error(as_layout_map(keras_map), "(a+)+b", fixed = TRUE,
                 class = "kerasmesh_error_layout_key")
    expect_error(model_parallel(keras_map),
                 class = "kerasmesh_error_layout_key")
    # Added to the Keras map after it was wrapped: refused on the change.
    keras_map <- keras_layout_map_with("ok")
    lm <- as_layout_map(keras_map)
    reticulate::py_set_item(keras_map, "(a|ab)*c",
                            reticulate::tuple(NULL, "model"))
    expect_error(lm[["x"]] <- "model", class = "kerasmesh_error_layout_key")
    expect_error(model_parallel(lm), class = "kerasmesh_error_layout_key")
    # layout_map() refuses it the same way.
    expect_error(layout_map(book_mesh(), "(a+)+b" = c(NA, "model")),
                 class = "kerasmesh_error_layout_key")
  })
})

# -- builders that compile, and errors that name what failed --------------

compiled_builder <- function() {
  model <- mlp_builder()()
  model$compile(optimizer = "adam", loss = "mse")
  model
}

test_that("a builder that compiles its model plans and costs", {
  skip_if_no_keras()
  within_seconds({
    lm <- layout_map(book_mesh(), ".*dense.*kernel" = c(NA, "model"))
    plan <- layout_plan(compiled_builder, lm)
    expect_s3_class(plan, "kerasmesh_layout_plan")
    cost <- layout_cost(compiled_builder, model_parallel(lm), batch_size = 8)
    expect_s3_class(cost, "kerasmesh_layout_cost")
    # The model's compiled optimizer and loss are the ones costed.
    expect_gt(cost$memory[["optimizer"]], 0)
    expect_match(cost$loss, "mse|mean_squared_error")
  }, 120)
})

test_that("compare_layouts() names the layout that failed", {
  skip_if_no_keras()
  within_seconds({
    lm <- layout_map(book_mesh(), ".*dense.*kernel" = c(NA, "model"))
    layouts <- list(dp = data_parallel(), mp = model_parallel(lm), odd = "x")
    expect_error(compare_layouts(mlp_builder(), layouts, batch_size = 8),
                 "distributions$odd", fixed = TRUE,
                 class = "kerasmesh_error_distribution")
    err <- expect_error(
      compare_layouts(mlp_builder(), layouts[1:2], batch_size = 6),
      class = "kerasmesh_error_batch_size"
    )
    expect_match(conditionMessage(err), 'layout "dp" (1 of 2)', fixed = TRUE)
    expect_identical(err$layout, "dp")
    expect_s3_class(err$parent, "kerasmesh_error_batch_size")
    expect_error(compare_layouts(mlp_builder(), layouts[1], batch_size = 8,
                                 timout = 3),
                 "timout", class = "kerasmesh_error_argument")
  }, 120)
})

test_that("layout_cost() argument errors are classed and name the argument", {
  skip_if_no_keras()
  within_seconds({
    build <- mlp_builder()
    dp <- data_parallel()
    cases <- list(
      list(quote(layout_cost(build, dp, batch_size = 8, timout = 3)),
           "timout"),
      list(quote(layout_cost(build, dp, 8, NULL, NULL, NULL, 3)), "..1"),
      list(quote(layout_cost(build, dp, batch_size = "8")), "batch_size"),
      list(quote(layout_cost(build, dp, batch_size = 8, timeout = -1)),
           "timeout"),
      list(quote(layout_cost(build, dp, batch_size = 8, timeout = NA)),
           "timeout"),
      list(quote(layout_cost(3, dp, batch_size = 8)), "model"),
      list(quote(layout_cost(build, 3, batch_size = 8)), "distribution")
    )
    for (case in cases) {
      err <- expect_error(eval(case[[1]]), class = "kerasmesh_error")
      expect_match(conditionMessage(err), case[[2]], fixed = TRUE)
    }
  }, 60)
})

test_that("bytes_text() refuses what is not bytes", {
  for (x in list("a", TRUE, list("a"), mean, factor("a"))) {
    expect_error(bytes_text(x), "bytes", class = "kerasmesh_error_argument")
  }
  expect_identical(bytes_text(list(1, 2000)), c("1 B", "2 kB"))
  expect_identical(bytes_text(c(NA, 5)), c(NA, "5 B"))
  expect_identical(bytes_text(NA), NA_character_)
})

test_that("compare_layouts() keeps every class of a layout's error", {
  skip_if_no_keras()
  within_seconds({
    lm <- layout_map(book_mesh(), ".*dense.*kernel" = c("model", NA))
    odd <- function() two_dense_builder(30, 64, 16)()
    err <- expect_error(
      compare_layouts(odd, list(mp = model_parallel(lm)), batch_size = 8),
      class = "kerasmesh_error_layout_divisibility"
    )
    ours <- grep("^kerasmesh_error", class(err$parent), value = TRUE)
    expect_true(all(ours %in% class(err)))
    expect_match(conditionMessage(err), 'layout "mp" (1 of 1)', fixed = TRUE)
  }, 120)
})
