test_that("layout_map() takes rules as named arguments", {
  skip_if_no_keras()
  lm <- layout_map(book_mesh(),
                   "dense.*kernel" = c(NA, "model"),
                   "dense.*bias" = "model")
  expect_s3_class(lm, "kerasmesh_layout_map")
  expect_identical(names(lm), c("dense.*kernel", "dense.*bias"))
  expect_identical(length(lm), 2L)
  expect_identical(as.list(lm)[["dense.*kernel"]], c(NA, "model"))
  # The mesh after the rules is still the mesh.
  after <- layout_map("dense.*kernel" = c(NA, "model"), book_mesh())
  expect_identical(names(after), "dense.*kernel")
})

test_that("a mesh given twice is said to be", {
  mesh <- fixture_mesh()
  expect_error(layout_map(mesh, mesh = mesh, ".*k" = "model"),
               "given once", class = "kerasmesh_error_argument")
})

test_that("a layout map prints its rules under the mesh", {
  skip_if_no_keras()
  lm <- layout_map(book_mesh(),
                   "dense.*kernel" = c(NA, "model"),
                   "dense.*bias" = "model")
  expect_snapshot(print(lm))
  expect_snapshot(print(layout_map(book_mesh())))
})

test_that("r_to_py() gives a Keras LayoutMap that ModelParallel accepts", {
  skip_if_no_keras()
  lm <- layout_map(book_mesh(), "dense.*kernel" = c(NA, "model"))
  dist <- keras()$distribution$ModelParallel(layout_map = lm,
                                             batch_dim_name = "data")
  expect_s3_class(dist, "keras.src.distribution.distribution_lib.ModelParallel")
})

test_that("bad rules give classed errors when they are added", {
  skip_if_no_keras()
  mesh <- book_mesh()
  lm <- layout_map(mesh, "dense.*kernel" = c(NA, "model"))
  expect_error(layout_map(mesh, k = c(NA, "modle")),
               class = "kerasmesh_error_layout_axes")
  expect_error(layout_map(mesh, k = c("model", "model")),
               class = "kerasmesh_error_layout_axes")
  expect_error(layout_map(mesh, "dense[" = "model"),
               class = "kerasmesh_error_layout_key")
  expect_error(lm[[1]] <- "model", class = "kerasmesh_error_layout_key")
  expect_error(lm[["dense.*kernel"]] <- "model",
               class = "kerasmesh_error_layout_key_exists")
  expect_error(lm[["k"]] <- 3, class = "kerasmesh_error_layout_axes")
  expect_error(layout_map(mesh, c(NA, "model")),
               class = "kerasmesh_error_layout_key")
  expect_error(layout_map(mesh, " " = "model"), "spaces only",
               class = "kerasmesh_error_layout_key")
  expect_error(layout_map("mesh"), class = "kerasmesh_error_device_mesh")
  expect_snapshot(error = TRUE, {
    layout_map(mesh, k = c(NA, "modle"))
    layout_map(mesh, k = c("model", "model"))
    layout_map(mesh, "dense[" = "model")
    lm[[1]] <- "model"
    lm[["dense.*kernel"]] <- "model"
  })
  # The failed assignments left the map as it was.
  expect_identical(names(lm), "dense.*kernel")
})

test_that("keys that look like argument names are ordinary rule keys", {
  skip_if_no_keras()
  mesh <- book_mesh()
  keys <- c("m", "me", "mesh", "x", "i", "value", "...")
  rules <- stats::setNames(rep(list(c(NA, "model")), length(keys)), keys)
  lm <- do.call(layout_map, c(list(mesh), rules))
  expect_identical(names(lm), keys)
  lm <- layout_map(mesh, m = c(NA, "model"), me = "model",
                   mesh = list(NULL, "data"))
  expect_identical(as.list(lm),
                   list(m = c(NA, "model"), me = "model",
                        mesh = c(NA, "data")))
  expect_identical(lm[["m"]], c(NA, "model"))
  expect_identical(names(lm["m"]), "m")
  expect_identical(names(lm[c("mesh", "me")]), c("mesh", "me"))
  lm["x"] <- "data"
  lm[["i"]] <- "model"
  lm["value"] <- list(NULL, "model")
  expect_identical(names(lm), c("m", "me", "mesh", "x", "i", "value"))
  expect_identical(lm[["value"]], c(NA, "model"))
  # The mesh may still be named.
  expect_identical(names(layout_map(mesh = mesh, m = "model")), "m")
  expect_identical(names(layout_map(m = "model", mesh = mesh)), "m")
})

test_that("a layout map prints from its description alone, without Python", {
  expect_snapshot(print(fixture_layout_map()))
  expect_identical(names(fixture_layout_map()$rules),
                   c(".*dense.*kernel", ".*dense.*bias"))
})

test_that("layout_map() refuses a missing mesh, keyless rules and bad axes", {
  mesh <- fixture_mesh()
  expect_error(layout_map(".*" = "model"),
               class = "kerasmesh_error_device_mesh")
  expect_error(layout_map(42, a = "model"),
               class = "kerasmesh_error_device_mesh")
  expect_error(layout_map(mesh, c(NA, "model")),
               class = "kerasmesh_error_layout_key")
  expect_error(layout_map(mesh, " " = "model"), "spaces only",
               class = "kerasmesh_error_layout_key")
  expect_error(layout_map(mesh, a = 1), class = "kerasmesh_error_layout_axes")
  expect_error(layout_map(mesh, a = list(NA, 2)),
               class = "kerasmesh_error_layout_axes")
  expect_error(layout_map(mesh, a = factor("model")),
               class = "kerasmesh_error_layout_axes")
  expect_error(layout_map(mesh = mesh, a = TRUE),
               class = "kerasmesh_error_layout_axes")
  expect_snapshot(error = TRUE, {
    layout_map(mesh, ".*kernel" = c(NA, "model"), "model")
    layout_map(mesh, ".*kernel" = list(NULL, 3))
    layout_map(mesh, ".*kernel" = 1:2)
    layout_map(mesh, "model", c(NA, "model"))
  })
})

test_that("axes go to the shim as a list, NA as NULL, whatever their R form", {
  to_shim <- kerasmesh:::axes_for_shim
  expect_identical(to_shim(c(NA, "model")), list(NULL, "model"))
  expect_identical(to_shim(c(a = NA, b = "model")), list(NULL, "model"))
  expect_identical(to_shim(list(NULL, "model")), list(NULL, "model"))
  expect_identical(to_shim(list(NA, "model")), list(NULL, "model"))
  expect_identical(to_shim(c(NA, NA)), list(NULL, NULL))
  expect_identical(to_shim(character()), list())
  expect_identical(to_shim(list(c("data", "model"), NA)),
                   list(list("data", "model"), NULL))
})

test_that("a key with a line break prints escaped, on one row", {
  desc <- fixture("layout-map-book")
  desc$keys[[1]] <- "x\ny"
  lines <- format(kerasmesh:::new_layout_map(desc))
  expect_true(any(grepl('"x\\ny"', lines, fixed = TRUE)))
  expect_length(lines, 4)
})

test_that("an axis name with a quote prints escaped", {
  expect_identical(kerasmesh:::format_axes(c(NA, 'mo"del')),
                   '(NA, "mo\\"del")')
})

test_that("as_layout_map() names its argument, not a value typed in", {
  expect_error(as_layout_map("x"), "`x` must be a layout map", fixed = TRUE,
               class = "kerasmesh_error_layout_map")
  expect_error(as_layout_map(NULL), "`x` must be a layout map", fixed = TRUE,
               class = "kerasmesh_error_layout_map")
  not_a_map <- 3
  expect_error(as_layout_map(not_a_map), "`not_a_map` must be a layout map",
               fixed = TRUE, class = "kerasmesh_error_layout_map")
})

test_that("a map on a mesh of 8 reads \"an 8\"", {
  skip_if_no_keras()
  lm <- layout_map(device_mesh(c(model = 8)), ".*kernel" = c(NA, "model"))
  expect_match(format(lm)[[1]], "1 rule on an 8 (model)", fixed = TRUE)
})
