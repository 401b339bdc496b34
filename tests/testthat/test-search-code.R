test_that("a topology prints as the device_topology() call that makes it", {
  topo <- device_topology("h100-sxm-80gb", nodes = 4, memory = "64GB")
  code <- topology_code(topo)
  expect_equal(code,
               'device_topology("h100-sxm-80gb", nodes = 4, memory = 6.4e+10)')
  again <- eval(parse(text = code))
  expect_equal(unclass(again), unclass(topo))
  custom <- device_topology(devices_per_node = 4, memory = "24GB",
                            peak_flops = c(bfloat16 = 165e12),
                            intra_node_bandwidth = "32GB/s")
  expect_equal(unclass(eval(parse(text = topology_code(custom)))),
               unclass(custom))
})

test_that("long calls wrap within 80 columns and parse", {
  lines <- wrap_call("cost <- layout_cost(", c(
    "function() build(32)", "model_parallel(lm, batch_dim_name = \"data\")",
    "batch_size = 64", "optimizer = \"adam\"", "remat = \"full\"",
    "accumulation_steps = 4", "topology = topo"
  ))
  expect_true(all(nchar(lines) <= 80))
  expect_true(is.call(parse(text = paste(lines, collapse = "\n"))[[1]]))
})

test_that("a mesh in another device order prints its devices", {
  mesh <- fixture_mesh()
  expect_equal(search_mesh_code(mesh),
               "mesh <- device_mesh(c(data = 2, model = 4))")
  # The data axis fastest: column-major in R's array, as a grid shows it.
  mesh$devices[] <- sprintf("cpu:%d", 0:7)
  mesh <- as_made(mesh)
  code <- search_mesh_code(mesh)
  expect_match(paste(code, collapse = " "),
               'devices = c("cpu:0", "cpu:2", "cpu:4", "cpu:6", "cpu:1"',
               fixed = TRUE)
})

test_that("the printed code reproduces the search in a fresh session", {
  skip_if_no_keras()
  found <- within_seconds(topology_search(), 120)
  text <- format(found)
  code <- text[grep("^# To reproduce", text):length(text)]
  expect_true(any(grepl("^topo <- device_topology\\(", code)))
  expect_true(any(grepl("remat = \"none\"", code)))
  skip_if_not_installed("callr")
  again <- callr::r(function(code) {
    library(kerasmesh)
    simulate_devices(8)
    search_net <- function() {
      keras <- reticulate::import("keras")
      keras$Sequential(list(keras$Input(shape = list(32L)),
                            keras$layers$Dense(64L, name = "dense")),
                       name = "net")
    }
    eval(parse(text = paste(code, collapse = "\n")))
    c(need = cost$need, time = cost$time$total)
  }, args = list(code = code), timeout = 120)
  expect_equal(again[["need"]], found$cost$need)
  expect_equal(again[["time"]], found$time$total)
})

test_that("numbers in the printed code parse as the numbers", {
  expect_equal(code_number(4096), "4096")
  expect_equal(code_number(1e6), "1000000")
})

test_that("names that are not syntactic print in backquotes, so code parses", {
  found <- fixture_search()
  found$call$model <- "my build"
  code <- search_reproduce_code(found)
  expect_true(any(grepl("layout_cost(\n  `my build`,",
                        paste(code, collapse = "\n"), fixed = TRUE)))
  expect_true(is.expression(parse(text = code)))
  found$call$blocks <- 48
  code <- search_reproduce_code(found)
  expect_true(any(grepl("function() `my build`(48)", code, fixed = TRUE)))
  expect_true(is.expression(parse(text = code)))
  mesh <- fixture_mesh()
  names(mesh$shape) <- c("the data", "model")
  mesh <- as_made(mesh)
  expect_equal(search_mesh_code(mesh),
               "mesh <- device_mesh(c(`the data` = 2, model = 4))")
})

test_that("a space past a double's range prints as a count", {
  found <- fixture_search()
  found$space_size <- Inf
  found <- as_made(found)
  expect_match(format(found)[1], "predicted of more than 1.8e+308 layouts",
               fixed = TRUE)
  found$space_size <- 3.21e40
  found <- as_made(found)
  expect_match(format(found)[1], "of about 3.2e+40 layouts", fixed = TRUE)
})
