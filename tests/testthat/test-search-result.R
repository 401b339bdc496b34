test_that("a search's tables have fixed column types, however long", {
  one <- list(mesh = "2x4", layout = "tensor parallel", remat = "none",
              accumulation_steps = 2, memory = 2e9, traffic = 1e9,
              value = 0.5, fits = TRUE, rules = 4, reshardings = 0)
  rows <- kerasmesh:::search_candidates(list(one, one))
  expect_identical(nrow(rows), 2L)
  expect_type(rows$accumulation_steps, "integer")
  expect_type(rows$rules, "integer")
  expect_type(rows$fits, "logical")
  # A field the shim leaves out gets its default, not an error.
  bare <- kerasmesh:::search_candidates(list(list(remat = "none")))
  expect_identical(bare$accumulation_steps, 1L)
  expect_identical(bare$reshardings, 0L)
  expect_true(is.na(bare$memory))
  # No rows: the same columns.
  expect_identical(names(kerasmesh:::search_candidates(list())), names(rows))
  expect_identical(nrow(kerasmesh:::search_unprofiled(list())), 0L)
  expect_identical(nrow(kerasmesh:::search_meshes(list())), 0L)
})

test_that("why names each lever's rival and drops levers without one", {
  rival <- list(mesh = "4x2", layout = "data parallel", remat = "none",
                accumulation_steps = 1, memory = 3e9, value = 0.6,
                fits = TRUE, ratio = 1.2)
  why <- kerasmesh:::search_why(list(
    binds = "memory", levers = list(mesh = rival, remat = NULL),
    faster = utils::modifyList(rival, list(fits = FALSE, ratio = 0.8))
  ))
  expect_identical(why$binds, "memory")
  expect_identical(why$levers$lever, "mesh")
  expect_identical(why$levers$ratio, 1.2)
  expect_false("traffic" %in% names(why$levers))
  expect_identical(why$faster$ratio, 0.8)
  expect_null(kerasmesh:::search_why(NULL))
})

test_that("meshes read their shape and orders as plain values", {
  meshes <- kerasmesh:::search_meshes(list(list(
    mesh = "2x4", shape = list(2, 4), orders = list("a", "b"), costed = 3,
    pruned = 1, fits = TRUE, memory = NULL, value = 0.4
  )))
  expect_identical(meshes$data, 2L)
  expect_identical(meshes$model, 4L)
  expect_identical(meshes$orders, "a, b")
  expect_true(is.na(meshes$memory))
})

test_that("a search edited by hand is refused, naming the field", {
  for (field in c("compiles", "space_size", "candidates", "method",
                  "objective", "mesh", "layout_map")) {
    search <- fixture_search()
    search[[field]] <- NULL
    for (f in list(format, plot, summary, as_layout_map)) {
      expect_error(f(search), paste0("$", field), fixed = TRUE,
                   class = "kerasmesh_error_argument")
    }
  }
  search <- fixture_search()
  search$budget <- "8GB"
  expect_error(print(search), "x$budget", fixed = TRUE,
               class = "kerasmesh_error_argument")
})

test_that("a search's fields are read by their exact names", {
  search <- fixture_search()
  search$meshes <- data.frame(mesh = "2x4")
  search$mesh <- NULL
  expect_null(search$mesh)
  expect_identical(search$meshes$mesh, "2x4")
  expect_null(search$mes)
})
