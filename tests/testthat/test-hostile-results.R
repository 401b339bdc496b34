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
