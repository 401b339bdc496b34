test_that("search_layout() takes a mesh or a topology, nothing else", {
  topo <- device_topology("h100-sxm-80gb")
  expect_identical(search_mesh_arg(topo)$topology, topo)
  expect_null(search_mesh_arg(topo)$mesh)
  expect_error(search_mesh_arg("8 GPUs"),
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
  expect_equal(search_levers_args(NULL, NULL, 16, call),
               list(remat = NULL, accumulation_steps = NULL))
  expect_equal(search_levers_args(c("none", "full"), c(1, 4), 16, call),
               list(remat = list("none", "full"),
                    accumulation_steps = list(1L, 4L)))
  expect_error(search_levers_args("most", NULL, 16, call),
               class = "kerasmesh_error_remat")
  expect_error(search_levers_args(NA_character_, NULL, 16, call),
               class = "kerasmesh_error_remat")
  err <- expect_error(search_levers_args(NULL, 3, 16, call),
                      class = "kerasmesh_error_accumulation_steps")
  expect_match(conditionMessage(err), "(3)", fixed = TRUE)
  expect_error(search_levers_args(NULL, "two", 16, call),
               class = "kerasmesh_error_accumulation_steps")
})

test_that("the printed code names the model as the call did", {
  expect_equal(search_model_name(quote(build)), "build")
  expect_equal(search_model_name(quote(function() NULL)), "model")
})
