# One converter for axes: every entry point takes the same forms and
# refuses the same ones with the same classed error.

axes_forms <- function() {
  keras <- keras()
  list(
    character = c(NA, "model"),
    list = list(NULL, "model"),
    list_na = list(NA, "model"),
    tuple = reticulate::tuple(NULL, "model"),
    python_list = reticulate::r_to_py(list(NULL, "model")),
    tensor_layout = keras$distribution$TensorLayout(
      reticulate::tuple(NULL, "model")
    )
  )
}

test_that("every form of axes gives the same rule at every entry point", {
  skip_if_no_keras()
  mesh <- book_mesh()
  for (form in names(axes_forms())) {
    axes <- axes_forms()[[form]]
    by_call <- layout_map(mesh, "dense.*kernel" = axes)
    by_double <- layout_map(mesh)
    by_double[["dense.*kernel"]] <- axes
    by_single <- layout_map(mesh)
    by_single["dense.*kernel"] <- axes
    for (lm in list(by_call, by_double, by_single)) {
      expect_identical(as.list(lm), list("dense.*kernel" = c(NA, "model")),
                       info = form)
      expect_identical(lm[["dense_1/kernel"]], c(NA, "model"), info = form)
    }
    picture <- sharding_picture(mesh, axes = axes, shape = c(8, 8))
    expect_identical(picture$axes, c(NA, "model"), info = form)
    expect_identical(picture$shard_shape, c(8L, 2L), info = form)
  }
})

test_that("a single name and an all-NA layout are accepted in every form", {
  skip_if_no_keras()
  lm <- layout_map(book_mesh(), bias = "model", a = NA, b = c(NA, NA),
                   c = reticulate::tuple("model"), d = list(NULL))
  expect_identical(as.list(lm), list(bias = "model", a = NA_character_,
                                     b = c(NA_character_, NA_character_),
                                     c = "model", d = NA_character_))
})

test_that("wrong R types and wrong Python objects get the same error", {
  skip_if_no_keras()
  mesh <- book_mesh()
  keras <- keras()
  bad <- list(
    number = 3,
    fun = function() "model",
    entry = list(NULL, 3),
    dict = reticulate::dict(a = 1),
    variable = keras$Variable(reticulate::r_to_py(list(1, 2)))
  )
  lm <- layout_map(mesh)
  for (what in names(bad)) {
    axes <- bad[[what]]
    err <- expect_error(layout_map(mesh, "dense.*kernel" = axes),
                        class = "kerasmesh_error_layout_axes", info = what)
    expect_match(conditionMessage(err), 'The layout for "dense.*kernel"',
                 fixed = TRUE, info = what)
    expect_error(lm[["k"]] <- axes, class = "kerasmesh_error_layout_axes",
                 info = what)
    expect_error(lm["k"] <- axes, class = "kerasmesh_error_layout_axes",
                 info = what)
    expect_error(sharding_picture(mesh, axes = axes, shape = c(8, 8)),
                 class = "kerasmesh_error_layout_axes", info = what)
  }
  expect_identical(length(lm), 0L)
  expect_snapshot(error = TRUE, {
    layout_map(mesh, "dense.*kernel" = 3)
    layout_map(mesh, "dense.*kernel" = list(NULL, 3))
    layout_map(mesh, "dense.*kernel" = reticulate::dict(a = 1))
    sharding_picture(mesh, axes = reticulate::dict(a = 1), shape = 8)
  })
})

test_that("messages describe Python values in R's terms", {
  skip_if_no_keras()
  mesh <- book_mesh()
  err <- expect_error(layout_map(mesh, k = reticulate::dict(a = 1)),
                      class = "kerasmesh_error_layout_axes")
  expect_match(conditionMessage(err), "Received a named list", fixed = TRUE)
  err <- expect_error(layout_map(mesh, k = list(NULL, 3)),
                      class = "kerasmesh_error_layout_axes")
  expect_no_match(conditionMessage(err), "Python")
  expect_match(conditionMessage(err), "Dimension 2 is a number")
})

test_that("several mesh axes on one dimension are refused everywhere", {
  skip_if_no_keras()
  mesh <- book_mesh()
  pairs <- list(
    plus = c(NA, "data+model"),
    list = list(NULL, c("data", "model")),
    tuple = reticulate::tuple(NULL, reticulate::tuple("data", "model"))
  )
  lm <- layout_map(mesh)
  for (what in names(pairs)) {
    axes <- pairs[[what]]
    for (err in list(
      expect_error(layout_map(mesh, k = axes),
                   class = "kerasmesh_error_layout_axes"),
      expect_error(lm[["k"]] <- axes, class = "kerasmesh_error_layout_axes"),
      expect_error(lm["k"] <- axes, class = "kerasmesh_error_layout_axes"),
      expect_error(sharding_picture(mesh, axes = axes, shape = c(8, 8)),
                   class = "kerasmesh_error_layout_axes")
    )) {
      expect_match(conditionMessage(err), "several mesh axes", info = what)
      expect_match(conditionMessage(err), 'Dimension 2 names "data" and',
                   fixed = TRUE, info = what)
    }
  }
  expect_snapshot(error = TRUE, {
    layout_map(mesh, k = list(NULL, c("data", "model")))
    sharding_picture(mesh, axes = c(NA, "data+model"), shape = c(8, 8))
  })
})

test_that("axes from a placed array may name several axes in a picture", {
  skip_if_no_keras()
  report <- structure(
    data.frame(path = "x", stringsAsFactors = FALSE),
    class = c("kerasmesh_sharding", "data.frame")
  )
  report$axes <- list("data+model")
  report$shape <- list(16L)
  report$dtype <- "float32"
  report <- as_made(report)
  picture <- sharding_picture(report, mesh = book_mesh())
  expect_identical(picture$axes, "data+model")
  expect_identical(picture$copies, 1L)
  expect_identical(picture$source, "placed")
})

test_that("axes come back from Python as a character vector", {
  expect_identical(
    kerasmesh:::axes_from_python(list(NULL, "model", list("data", "model"))),
    c(NA, "model", "data+model")
  )
})
