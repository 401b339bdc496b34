# How a device topology prints.

test_that("a topology prints its devices, peaks and links within 80 columns", {
  expect_snapshot({
    device_topology("h100-sxm-80gb", nodes = 4)
    device_topology("a100-sxm-80gb", devices_per_node = 4,
                    inter_node_bandwidth = "100Gb/s",
                    efficiency = c(matmul = 0.6))
    device_topology(devices_per_node = 4, memory = "24GB",
                    peak_flops = 165e12, intra_node_bandwidth = "32GB/s")
  })
  for (topo in list(device_topology("h200-sxm-141gb", nodes = 16),
                    device_topology("h100-sxm-80gb", memory_bandwidth = 1))) {
    expect_lte(max(nchar(format(topo))), 80)
  }
})

test_that("print() returns the topology invisibly", {
  topo <- device_topology("h100-sxm-80gb")
  printed <- capture.output(out <- withVisible(print(topo)))
  expect_false(out$visible)
  expect_identical(out$value, topo)
  expect_identical(printed, format(topo))
})

test_that("rates, FLOP/s, shares and seconds read in their best unit", {
  expect_identical(kerasmesh:::format_rate(c(450e9, NA)), c("450 GB/s", "-"))
  expect_identical(kerasmesh:::format_flop_rate(989e12), "989 TFLOP/s")
  expect_identical(kerasmesh:::format_flops(17.9e12), "17.9 TFLOP")
  expect_identical(kerasmesh:::format_share(0.4), "40%")
  withr::local_options(cli.unicode = FALSE)
  expect_identical(
    kerasmesh:::format_seconds(c(0, 3.4e-6, 0.0123, 1.25, 2e-10, NA)),
    c("0 s", "3.4 us", "12.3 ms", "1.25 s", "0.2 ns", "-")
  )
})

test_that("a topology edited by hand into nonsense is refused, not printed", {
  topo <- device_topology("h100-sxm-80gb")
  topo$nodes <- NA
  expect_error(format(topo), "topology\\$nodes",
               class = "kerasmesh_error_topology")
  topo <- device_topology("h100-sxm-80gb")
  topo$efficiency <- NULL
  expect_error(print(topo), class = "kerasmesh_error_topology")
})

test_that("a topology edited by hand prints as a cost reads it", {
  edited <- function(field, value) {
    topo <- device_topology("h100-sxm-80gb", nodes = 2)
    topo[field] <- list(value)
    topo
  }
  # Read as a cost reads them: a partial efficiency keeps the others, a
  # size or rate as text is parsed, a bandwidth taken away is not timed.
  expect_match(format(edited("efficiency", c(matmul = 0.5))),
               "50% of peak in matrix products, 50% in attention",
               all = FALSE)
  expect_match(format(edited("memory", "40GB")), "memory 40 GB", all = FALSE)
  expect_match(format(edited("intra_node_bandwidth", "450GB/s")),
               "in a node\\s+450 GB/s", all = FALSE)
  expect_match(paste(format(edited("memory_bandwidth", NULL)), collapse = " "),
               "memory-bound\\s+operations not timed")
  # Words that no longer say one thing are refused, naming the field.
  for (case in list(list("name", NULL), list("description", c("a", "b")),
                    list("links", NULL), list("links", c("a", "b", "c")),
                    list("given", 1))) {
    expect_error(format(edited(case[[1]], case[[2]])),
                 paste0("topology$", case[[1]]), fixed = TRUE,
                 class = "kerasmesh_error_topology")
  }
  # A latency past a double's range is refused where it is given.
  expect_error(device_topology("h100-sxm-80gb", intra_node_latency = Inf),
               "intra_node_latency", class = "kerasmesh_error_topology")
})
