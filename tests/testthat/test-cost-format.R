# layout_cost() and compare_layouts() results, built with their
# constructors from descriptions made up in the shim's shape: pure R.

cost_desc <- function(mesh = "mesh-2x4", scale = 1, collectives = TRUE,
                      warnings = list("w")) {
  list(
    memory = list(weights = 4352 * scale, optimizer = 8708 * scale,
                  inputs = 768, activations = 9000 * scale, outputs = 4,
                  total = 22832 * scale),
    xla = list(argument = 13828, temp = 9000, output = 13060, alias = 13056,
               total = 22832 * scale),
    need = 22832 * scale,
    collectives = if (collectives) {
      list(collective = list("all-reduce", "all-gather", "all-reduce"),
           axes = list("data", "model", ""), count = list(2L, 1L, 3L),
           bytes = list(4352, 1024, 77))
    } else {
      list(collective = list(), axes = list(), count = list(),
           bytes = list())
    },
    ops = list(list(collective = "all-reduce", axes = list("data"),
                    bytes = 4352, shapes = list(list(32L, 64L)),
                    groups = list(list(0L, 4L)))),
    plan = list(model = "sequential", batch_ways = 2L, optimizer = "adam",
                unmatched = list(), dtypes = list("float32")),
    mesh = fixture(mesh), distribution = "model_parallel", batch_size = 16L,
    batch_dim_name = "data", loss = "mse",
    inputs = list(name = list("input"), shape = list(list(32L)),
                  dtype = list("float32")),
    compile_seconds = 1.234,
    versions = list(keras = "3.5", jax = "0.4.30", jaxlib = "0.4.30",
                    xla = "x"),
    warnings = warnings
  )
}

new_cost <- function(...) kerasmesh:::new_layout_cost(cost_desc(...))

test_that("a layout cost keeps the shim's figures as R values", {
  cost <- new_cost()
  expect_s3_class(cost, "kerasmesh_layout_cost")
  expect_identical(cost$memory[["total"]], 22832)
  expect_identical(cost$collectives$count, c(2L, 1L, 3L))
  expect_identical(cost$traffic, c(data = 4352, model = 1024, 77))
  expect_identical(names(cost$traffic), c("data", "model", ""))
  expect_identical(cost$ops$axes, "data")
  expect_identical(cost$ops$shapes[[1]], list(c(32L, 64L)))
  expect_identical(cost$inputs$shape[[1]], 32L)
  expect_identical(cost$batch_size, 16L)
  expect_s3_class(cost$mesh, "kerasmesh_device_mesh")
  expect_identical(cost$warnings, "w")
})

test_that("a layout cost prints memory, XLA's figures and collectives", {
  lines <- format(new_cost())
  expect_identical(lines[[1]], paste(
    '<kerasmesh_layout_cost> model "sequential",', "model parallel"
  ))
  expect_match(lines[[3]], 'batch 16 split over "data" \\(2 ways\\)')
  memory <- lines[seq(match("Memory per device:", lines) + 1, length.out = 7)]
  expect_identical(memory, c(
    "                           per device",
    "  weights                     4.35 kB",
    "  optimizer state             8.71 kB",
    "  batch (inputs, targets)       768 B",
    "  gradients, activations         9 kB",
    "  other outputs                   4 B",
    "  total                       22.8 kB"
  ))
  at <- grep("^Collectives per step", lines)
  expect_identical(lines[at + 0:2], c(
    "Collectives per step: 6, 5.45 kB per device",
    "  collective  mesh axes  count  bytes per device",
    "  all-reduce  data           2           4.35 kB"
  ))
  expect_identical(lines[at + 3:4], c(
    "  all-gather  model          1           1.02 kB",
    "  all-reduce  (none)         3              77 B"
  ))
  expect_match(lines, "^Compiled in 1.23 s: Keras 3.5", all = FALSE)
  expect_identical(lines[[length(lines)]],
                   "Plan: 1 warning (see check_layout())")
})

test_that("a device memory says whether the step fits", {
  fits <- format(new_cost(), memory = "80GB")
  expect_true("Device memory 80GB: fits (22.8 kB of 80GB)" %in% fits)
  tight <- format(new_cost(), memory = 20000)
  expect_true("Device memory 20 kB: does not fit (22.8 kB of 20 kB)" %in%
                tight)
  expect_error(format(new_cost(), memory = "lots"),
               class = "kerasmesh_error")
})

test_that("a step without collectives or warnings says so briefly", {
  lines <- format(new_cost(collectives = FALSE, warnings = list()))
  expect_true("Collectives per step: none" %in% lines)
  expect_false(any(grepl("^Plan:", lines)))
  expect_identical(new_cost(collectives = FALSE)$traffic,
                   stats::setNames(numeric(), character()))
})

test_that("a comparison has one row per layout and prints a table", {
  cmp <- kerasmesh:::new_layout_comparison(list(
    dp = new_cost(),
    mp = new_cost(mesh = "mesh-3d", scale = 3, collectives = FALSE)
  ))
  expect_s3_class(cmp, "kerasmesh_layout_comparison")
  expect_identical(cmp$layout, c("dp", "mp"))
  expect_identical(cmp$mesh, c("data=2,model=4", "stage=2,data=2,model=2"))
  expect_identical(cmp$total, c(22832, 68496))
  expect_identical(cmp$traffic, c(5453, 0))
  expect_identical(cmp$collectives, c(6L, 0L))
  expect_null(cmp$fits)
  expect_identical(nrow(attr(cmp, "traffic")), 3L)
  lines <- format(cmp)
  expect_identical(lines[[1]], paste(
    "<kerasmesh_layout_comparison> 2 layouts,", 'model "sequential", batch 16'
  ))
  expect_identical(lines[3:5], c(
    "  layout  weights  optimizer  activations    total  traffic",
    "  dp      4.35 kB    8.71 kB         9 kB  22.8 kB  5.45 kB",
    "  mp      13.1 kB    26.1 kB        27 kB  68.5 kB      0 B"
  ))
  expect_identical(utils::tail(lines, 2), c(
    "  dp (data=2,model=4): (no axis) 77 B, data 4.35 kB, model 1.02 kB",
    "  mp (stage=2,data=2,model=2): none"
  ))
})

test_that("a comparison with a device memory marks the layouts that fit", {
  limit <- kerasmesh:::check_bytes("40kB")
  cmp <- kerasmesh:::new_layout_comparison(
    list(dp = new_cost(), mp = new_cost(scale = 3)), limit
  )
  expect_identical(cmp$fits, c(TRUE, FALSE))
  lines <- format(cmp)
  expect_match(lines[[3]], "fits$")
  expect_match(lines[[4]], "yes$")
  expect_match(lines[[5]], "no$")
  expect_true("Device memory: 40kB" %in% lines)
  df <- as.data.frame(cmp)
  expect_identical(class(df), "data.frame")
  expect_null(attr(df, "traffic"))
  expect_null(attr(df, "memory"))
  expect_identical(df$fits, c(TRUE, FALSE))
})

test_that("print() writes format() and returns the object invisibly", {
  cost <- new_cost()
  expect_output(out <- withVisible(print(cost)), "<kerasmesh_layout_cost>")
  expect_identical(out$visible, FALSE)
  expect_identical(out$value, cost)
})

test_that("a cost edited by hand is refused where it prints, naming it", {
  cost <- fixture_cost()
  cost$memory <- NULL
  expect_error(format(cost), "x$memory", fixed = TRUE,
               class = "kerasmesh_error_argument")
  cost <- fixture_cost()
  cost$xla <- c(total = 1)
  expect_error(print(cost), "x$xla", fixed = TRUE,
               class = "kerasmesh_error_argument")
  for (edit in list(list("batch_size", 1.5), list("compile_seconds", "a"),
                    list("topology", "h100"),
                    list("time", list(total = "x")))) {
    cost <- fixture_cost()
    cost[edit[[1]]] <- list(edit[[2]])
    expect_error(format(cost), paste0("x$", edit[[1]]), fixed = TRUE,
                 class = "kerasmesh_error_argument")
  }
  cost <- fixture_cost()
  cost$topology <- device_topology("h100-sxm-80gb")
  cost$topology$nodes <- NA
  expect_error(format(cost), "topology$nodes", fixed = TRUE,
               class = "kerasmesh_error_topology")
  # A misspelt option is an error, not a verdict silently left out.
  expect_error(format(fixture_cost(), memroy = "1GB"),
               class = "kerasmesh_error_argument")
})

test_that("comparisons bound by rows are plain data frames", {
  both <- rbind(fixture_comparison(), fixture_comparison())
  expect_identical(class(both), "data.frame")
  expect_null(attr(both, "traffic"))
})

test_that("a comparison's rows are its layouts, none printed as nothing", {
  cmp <- fixture_comparison()
  expect_error(cmp["no-such-layout", ], "its own rows",
               class = "kerasmesh_error_argument")
  expect_error(cmp[c(1, NA), ], "not there",
               class = "kerasmesh_error_argument")
  expect_error(cmp[c(1, 1), ], "twice", class = "kerasmesh_error_argument")
  none <- format(cmp[0, ])
  expect_match(none[[1]], "0 layouts", fixed = TRUE)
  expect_false(any(grepl("Traffic by mesh axis|\\(\\):", none)))
})
