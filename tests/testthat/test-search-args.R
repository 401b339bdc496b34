test_that("search_layout() takes a mesh or a topology, nothing else", {
  topo <- device_topology("h100-sxm-80gb")
  expect_identical(check_search_mesh(topo)$topology, topo)
  expect_null(check_search_mesh(topo)$mesh)
  expect_error(check_search_mesh("8 GPUs"),
               class = "kerasmesh_error_device_mesh")
})

test_that("the objective is time on a topology, traffic on a mesh", {
  topo <- device_topology("h100-sxm-80gb")
  expect_equal(check_search_objective(NULL, topo), "time")
  expect_equal(check_search_objective(NULL, NULL), "traffic")
  expect_equal(check_search_objective("traffic", topo), "traffic")
  expect_error(check_search_objective("speed", topo),
               class = "kerasmesh_error_argument")
})

test_that("the levers searched are checked, naming the value and rule", {
  call <- rlang::current_env()
  expect_equal(check_search_levers(NULL, NULL, 16, call),
               list(remat = NULL, accumulation_steps = NULL))
  expect_equal(check_search_levers(c("none", "full"), c(1, 4), 16, call),
               list(remat = list("none", "full"),
                    accumulation_steps = list(1L, 4L)))
  expect_error(check_search_levers("most", NULL, 16, call),
               class = "kerasmesh_error_remat")
  expect_error(check_search_levers(NA_character_, NULL, 16, call),
               class = "kerasmesh_error_remat")
  err <- expect_error(check_search_levers(NULL, 3, 16, call),
                      class = "kerasmesh_error_accumulation_steps")
  expect_match(conditionMessage(err), "(3)", fixed = TRUE)
  expect_error(check_search_levers(NULL, "two", 16, call),
               class = "kerasmesh_error_accumulation_steps")
})

test_that("the printed code names the model as the call did", {
  expect_equal(search_model_name(quote(build)), "build")
  expect_equal(search_model_name(quote(function() NULL)), "model")
})

test_that("bandwidth takes numbers and rate strings, named by axis", {
  expect_identical(check_bandwidth(c(data = 1e9, model = 4.5e11)),
                   list(data = 1e9, model = 4.5e11))
  expect_identical(check_bandwidth(c(data = "1GB/s", model = "400 gb/s")),
                   list(data = 1e9, model = 5e10))
  expect_identical(check_bandwidth(list(data = "8Gb/s", model = 1e9)),
                   list(data = 1e9, model = 1e9))
  err <- expect_error(check_bandwidth(c(data = "1GB/s", model = "fast")),
                      class = "kerasmesh_error_argument")
  expect_match(conditionMessage(err), 'bandwidth["model"]', fixed = TRUE)
  expect_match(conditionMessage(err), '"fast"', fixed = TRUE)
  expect_error(check_bandwidth(c(data = 0.5)), "at least one byte",
               class = "kerasmesh_error_argument")
  expect_error(check_bandwidth(c(data = 1e9, data = 2e9, model = 1e9)),
               'Given twice: "data"', class = "kerasmesh_error_argument")
  for (bad in list(c("1GB/s", "2GB/s"), list(data = list(1)), c(data = -1),
                   c(data = "1e999GB/s"), TRUE)) {
    expect_error(check_bandwidth(bad), "bandwidth",
                 class = "kerasmesh_error_argument")
  }
})
