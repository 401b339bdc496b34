# Objects built from the shim's saved plain-value descriptions
# (fixtures/*.rds, written by fixtures/make-fixtures.R), for tests of
# pure-R code (format, print, plot, summary, argument checks) that run
# without Python. Their `py` field is NULL.
fixture <- function(name) {
  readRDS(testthat::test_path("fixtures", paste0(name, ".rds")))
}

fixture_mesh <- function(name = "mesh-2x4") {
  kerasmesh:::new_device_mesh(fixture(name))
}

fixture_layout_map <- function(name = "layout-map-book") {
  kerasmesh:::new_layout_map(fixture(name))
}

fixture_plan <- function(name = "plan-book") {
  kerasmesh:::new_layout_plan(fixture(name))
}

fixture_picture <- function(name = "picture-book-kernel") {
  kerasmesh:::new_sharding_picture(fixture(name))
}

fixture_distribution <- function(name = "distribution-model-parallel") {
  kerasmesh:::new_distribution(fixture(name))
}

fixture_cost <- function(name = "cost-model-parallel") {
  kerasmesh:::new_layout_cost(fixture(name))
}

# A search_layout() result as it is built, from the saved descriptions of
# the book's layout map and a model-parallel cost (no Python).
fixture_search <- function() {
  kerasmesh:::stamp_fields(structure(
    list(
      layout_map = fixture_layout_map(), mesh = fixture_mesh(),
      candidates = kerasmesh:::search_candidates(list(
        list(mesh = "2x4", layout = "layout 2", remat = "none",
             accumulation_steps = 1, memory = 2e9, traffic = 1.5e9,
             value = 1.5e9, fits = TRUE, rules = 2, reshardings = 0),
        list(mesh = "2x4", layout = "data parallel", remat = "none",
             accumulation_steps = 1, memory = 3e9, traffic = 6e9,
             value = 6e9, fits = TRUE, rules = 0, reshardings = 0)
      )),
      why = kerasmesh:::search_why(list(binds = "objective", levers = list(
        mesh = NULL, device_order = NULL,
        layout = list(mesh = "2x4", layout = "data parallel",
                      remat = "none", accumulation_steps = 1, memory = 3e9,
                      value = 6e9, fits = TRUE, ratio = 4),
        remat = NULL, accumulation_steps = NULL
      ))),
      unprofiled = kerasmesh:::search_unprofiled(list()),
      cache = list(directory = NULL, hits = 0, misses = 2, note = NULL),
      cost = fixture_cost(), data_parallel = list(memory = 3e9,
                                                  traffic = 6e9),
      objective = "traffic", method = "exhaustive", space_size = 2,
      compiles = 2, seconds = 3.7, budget = 8e9, remat = "none",
      accumulation_steps = 1L, micro_batch_size = 16L,
      batch_dim_name = "data",
      call = list(model = "build", batch_size = 16, optimizer = "adam",
                  loss = "mse")
    ),
    class = "kerasmesh_layout_search"
  ))
}

# An object edited by a test into another case kerasmesh makes, stamped
# again as its constructor would stamp it (kerasmesh refuses objects
# edited by hand: utils-edits.R).
as_made <- function(x) kerasmesh:::stamp_fields(x)

# compare_layouts() of data and model parallelism, as it builds its result.
fixture_comparison <- function(memory = NULL) {
  kerasmesh:::new_layout_comparison(
    list(dp = fixture_cost("cost-data-parallel"),
         mp = fixture_cost("cost-model-parallel")),
    kerasmesh:::check_bytes(memory)
  )
}

fixture_checkpoint_info <- function(name = "checkpoint-info") {
  kerasmesh:::new_checkpoint_info(fixture(name))
}

# variable_sharding() of the MLP trained on the book's layout: the function
# itself, with its shim call answering the saved result.
fixture_sharding <- function() {
  variable_sharding <- with_shim(
    "variable_sharding", function(name, ...) fixture("sharding-mlp")
  )
  variable_sharding(structure(list(), class = "python.builtin.object"))
}

# kerasmesh's function `fun`, whose own calls to shim_call() and
# shim_object() go to `shim` instead (functions it calls are unchanged).
with_shim <- function(fun, shim) {
  ns <- asNamespace("kerasmesh")
  f <- get(fun, envir = ns)
  env <- new.env(parent = ns)
  env$shim_call <- shim
  env$shim_object <- shim
  environment(f) <- env
  f
}

# What kerasmesh's `fun` called with `...` sends the shim: list(name, args),
# the plain values the R layer made of its arguments. Nothing runs in
# Python, so this works without it.
shim_request <- function(fun, ...) {
  f <- with_shim(fun, function(name, ..., call = NULL) {
    rlang::abort("Request to the shim.", class = "kerasmesh_test_request",
                 request = list(name = name, args = list(...)))
  })
  tryCatch({
    f(...)
    stop("`", fun, "()` made no shim call.")
  }, kerasmesh_test_request = function(e) e$request)
}
