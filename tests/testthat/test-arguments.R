# Every R-side argument check of every exported function, fed each kind of
# wrong R value, gives its classed error, before Python is needed: these
# tests run without Python. Objects come from fixtures (helper-fixtures.R).

wrong_counts <- list(
  zero = 0, negative = -2, fraction = 1.5, missing = NA_real_,
  string = "8", two = c(8, 16), infinite = Inf, huge = 3e9, logical = TRUE,
  list = list(8)
)
wrong_strings <- list(
  number = 1, missing = NA_character_, empty = "", two = c("a", "b"),
  logical = TRUE, list = list("a"), empty_vector = character()
)
wrong_flags <- list(
  missing = NA, string = "yes", number = 1, two = c(TRUE, FALSE),
  empty = logical()
)
wrong_sizes <- list(
  words = "lots", unit = "80 GX", negative = -1, zero = 0,
  missing = NA_real_, two = c(1e9, 2e9), logical = TRUE, list = list(1e9)
)
wrong_choices <- list(
  unknown = "rules", missing = NA_character_, number = 1,
  two = c("layer", "rule"), empty = character()
)

# expect_error() for `f(value)` with each value, naming the value.
expect_each_refused <- function(f, values, class = "kerasmesh_error_argument") {
  for (name in names(values)) {
    expect_error(f(values[[name]]), class = class, info = name)
  }
}

build <- function() stop("The model is not built before the arguments pass.")

test_that("counts: batch sizes, intervals, limits and device counts", {
  lm <- fixture_layout_map()
  dist <- fixture_distribution()
  expect_each_refused(function(x) layout_plan(build, lm, batch_size = x),
                      wrong_counts)
  expect_each_refused(function(x) layout_cost(build, dist, batch_size = x),
                      wrong_counts)
  expect_each_refused(function(x) {
    compare_layouts(build, list(mp = dist), batch_size = x)
  }, wrong_counts)
  expect_each_refused(function(x) callback_checkpoint("dir", every = x),
                      wrong_counts)
  expect_each_refused(function(x) callback_checkpoint("dir", keep = x),
                      wrong_counts)
  expect_each_refused(function(x) simulate_devices(x),
                      c(wrong_counts, list(too_many = 5000)))
  expect_each_refused(function(x) plot(fixture_plan(), n = x),
                      wrong_counts)
  expect_each_refused(function(x) process_data(1:8, batch_size = x),
                      wrong_counts)
})

test_that("process_rows() checks rows, batch size, process and processes", {
  expect_each_refused(function(x) {
    process_rows(x, batch_size = 8, process = 0, processes = 2)
  }, list(negative = -1, fraction = 1.5, missing = NA_real_, string = "64",
          two = c(8, 16), infinite = Inf, huge = 3e9, logical = TRUE))
  expect_each_refused(function(x) {
    process_rows(64, batch_size = x, process = 0, processes = 2)
  }, wrong_counts)
  expect_each_refused(function(x) {
    process_rows(64, batch_size = 8, process = 0, processes = x)
  }, wrong_counts)
  expect_each_refused(function(x) {
    process_rows(64, batch_size = 8, process = x, processes = 2)
  }, list(negative = -1, too_big = 2, fraction = 0.5, missing = NA_real_,
          string = "0", two = c(0, 1), logical = FALSE))
  # A batch that does not split over the processes.
  expect_error(process_rows(64, batch_size = 9, process = 0, processes = 2),
               class = "kerasmesh_error_argument")
})

test_that("strings: paths, names, device types and dtypes", {
  plan <- fixture_plan()
  expect_each_refused(function(x) checkpoint_info(x), wrong_strings)
  expect_each_refused(function(x) callback_checkpoint(x), wrong_strings)
  expect_each_refused(function(x) list_devices(x), wrong_strings)
  expect_each_refused(function(x) layout_fix(plan, name = x), wrong_strings)
  expect_each_refused(function(x) numpy_array(1:3, dtype = x), wrong_strings)
  expect_each_refused(function(x) {
    model_parallel(fixture_layout_map(), batch_dim_name = x)
  }, wrong_strings)
})

test_that("flags: auto_shard_dataset of both distributions", {
  lm <- fixture_layout_map()
  expect_each_refused(function(x) data_parallel(auto_shard_dataset = x),
                      wrong_flags)
  expect_each_refused(function(x) model_parallel(lm, auto_shard_dataset = x),
                      wrong_flags)
})

test_that("numbers in a range: timeouts, replicated shares and steps", {
  dist <- fixture_distribution()
  lm <- fixture_layout_map()
  expect_each_refused(function(x) {
    layout_cost(build, dist, batch_size = 16, timeout = x)
  }, list(zero = 0, negative = -1, missing = NA_real_, string = "60",
          two = c(1, 2), logical = TRUE))
  expect_each_refused(function(x) {
    layout_plan(build, lm, replicated_share = x)
  }, list(negative = -0.1, above_one = 1.1, missing = NA_real_,
          string = "0.5", two = c(0.1, 0.2), logical = TRUE))
  expect_each_refused(function(x) checkpoint_info("dir", step = x),
                      list(negative = -1, fraction = 1.5, missing = NA_real_,
                           string = "1", two = c(1, 2), logical = TRUE))
})

test_that("sizes in bytes: plot limits and device memories", {
  plan <- fixture_plan()
  cost <- fixture_cost()
  expect_each_refused(function(x) plot(plan, memory = x), wrong_sizes)
  expect_each_refused(function(x) plot(cost, memory = x), wrong_sizes)
  expect_each_refused(function(x) format(cost, memory = x),
                      wrong_sizes)
  expect_each_refused(function(x) {
    compare_layouts(build, list(mp = fixture_distribution()), 16,
                    memory = x)
  }, wrong_sizes)
})

test_that("choices: how a plan's plot groups and what it counts", {
  plan <- fixture_plan()
  expect_each_refused(function(x) plot(plan, by = x), wrong_choices)
  expect_each_refused(function(x) plot(plan, what = x), wrong_choices)
})

test_that("objects: what is not a mesh, layout, plan or distribution", {
  not_objects <- list(number = 1, string = "x", list = list(), null = NULL,
                      data_frame = data.frame(a = 1))
  expect_each_refused(function(x) mesh_shape(x), not_objects,
                      class = "kerasmesh_error_device_mesh")
  expect_each_refused(function(x) model_parallel(x), not_objects,
                      class = "kerasmesh_error_layout_map")
  expect_each_refused(function(x) layout_plan(build, x), not_objects,
                      class = "kerasmesh_error_layout_map")
  expect_each_refused(function(x) layout_fix(x), not_objects)
  expect_each_refused(function(x) sharding_picture(x), not_objects)
  expect_each_refused(function(x) save_checkpoint(x, "dir"), not_objects)
  expect_each_refused(function(x) restore_checkpoint(x, "dir"), not_objects)
  expect_each_refused(function(x) {
    layout_cost(build, x, batch_size = 16)
  }, not_objects, class = "kerasmesh_error_distribution")
  expect_each_refused(function(x) {
    layout_plan(x, fixture_layout_map())
  }, not_objects, class = "kerasmesh_error_model")
  expect_each_refused(function(x) variable_values(x), not_objects,
                      class = "kerasmesh_error_model")
  expect_each_refused(function(x) numpy_array(x),
                      list(string = "1", list = list(1), null = NULL,
                           factor = factor("a"),
                           data_frame = data.frame(a = 1)),
                      class = "kerasmesh_error_array")
})

test_that("distributed_initialize() checks addresses and verbose first", {
  expect_each_refused(function(x) {
    distributed_initialize(coordinator_address = x)
  },
                      list(number = 1234, missing = NA_character_,
                           two = c("a:1", "b:2"), logical = TRUE),
                      class = "kerasmesh_error_distributed_argument")
  expect_each_refused(function(x) distributed_initialize(bind_address = x),
                      list(number = 1234, missing = NA_character_,
                           two = c("a", "b")),
                      class = "kerasmesh_error_distributed_argument")
  expect_each_refused(function(x) distributed_initialize(verbose = x),
                      wrong_flags,
                      class = "kerasmesh_error_distributed_argument")
})

test_that("every refused argument is a kerasmesh_error that names it", {
  err <- expect_error(layout_plan(build, fixture_layout_map(),
                                  batch_size = 1.5),
                      class = "kerasmesh_error")
  expect_match(conditionMessage(err), "`batch_size`", fixed = TRUE)
  expect_match(conditionMessage(err), "1.5", fixed = TRUE)
  err <- expect_error(callback_checkpoint("dir", keep = -1),
                      class = "kerasmesh_error")
  expect_match(conditionMessage(err), "`keep`", fixed = TRUE)
  expect_identical(rlang::call_name(err$call), "callback_checkpoint")
})
