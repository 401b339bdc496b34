# A topology's figures checked, as device_topology() receives them and as
# the shim does (plain values, checked again after an edit by hand). Pure
# R: no Python.

test_that("rates are bytes per second, or strings in bytes or bits", {
  rate <- function(x) {
    device_topology("h100-sxm-80gb", intra_node_bandwidth = x)$
      intra_node_bandwidth
  }
  expect_identical(rate(1e9), 1e9)
  expect_identical(rate("450GB/s"), 450e9)
  expect_identical(rate("450 GB/s"), 450e9)
  expect_identical(rate("400Gb/s"), 50e9)
  expect_identical(rate("200 Gbps"), 25e9)
  expect_identical(rate("1 TiB/s"), 2^40)
  expect_identical(rate("8 bit/s"), 1)
})

test_that("bad figures are topology errors naming the value and the rule", {
  bad <- function(...) device_topology("h100-sxm-80gb", ...)
  expect_snapshot(error = TRUE, {
    device_topology("h100")
    device_topology(c("h100-sxm-80gb", "a100-sxm-80gb"))
    bad(nodes = 1.5)
    bad(nodes = 0)
    bad(devices_per_node = -8)
    bad(memory = 0)
    bad(memory = "-80GB")
    bad(memory = "0GB")
    bad(intra_node_bandwidth = -1)
    bad(inter_node_bandwidth = 0)
    bad(inter_node_bandwidth = "fast")
    bad(memory_bandwidth = -1)
    bad(intra_node_latency = -1e-6)
    bad(efficiency = 0)
    bad(efficiency = 1.5)
    bad(efficiency = c(matmul = 0.5, speed = 0.5))
    bad(efficiency = c(0.5, 0.5))
    bad(all_reduce_bandwidth = 0)
    bad(peak_flops = c(1e12, 2e12))
    bad(peak_flops = c(bfloat16 = -1))
    device_topology(memory = "80GB")
    device_topology(nodes = 2, devices_per_node = 4, memory = "8GB",
                    peak_flops = 1e12, intra_node_bandwidth = 1e9)
  })
  for (e in list(quote(bad(memory = 0)), quote(bad(nodes = 2.5)),
                 quote(device_topology("tpu")))) {
    expect_error(eval(e), class = "kerasmesh_error_topology")
  }
  expect_error(device_topology("h100-sxm-80gb", 4),
               class = "kerasmesh_error_argument")
})

test_that("a topology reaches the shim as plain values", {
  values <- kerasmesh:::check_topology(device_topology("a100-sxm-80gb"))
  expect_identical(values$nodes, 1L)
  expect_identical(values$peak_flops,
                   list(bfloat16 = 312e12, float16 = 312e12,
                        float32 = 156e12))
  expect_identical(values$name, "a100-sxm-80gb")
  expect_identical(
    values[c("efficiency", "attention_efficiency", "memory_efficiency")],
    list(efficiency = 0.77, attention_efficiency = 0.6,
         memory_efficiency = 0.9)
  )
  expect_identical(values$all_reduce_bandwidth, 200e9)
  custom <- kerasmesh:::check_topology(device_topology(
    devices_per_node = 2, memory = 1e9, peak_flops = 1e12,
    intra_node_bandwidth = 1e9
  ))
  expect_null(custom$inter_node_bandwidth)
  expect_null(custom$memory_bandwidth)
  expect_null(custom$all_reduce_bandwidth)
  expect_identical(custom$peak_flops, 1e12)
  expect_null(kerasmesh:::check_topology(NULL))
  expect_snapshot(error = TRUE, kerasmesh:::check_topology("h100-sxm-80gb"))
})

test_that("a count past R's integers and a malformed rate are named", {
  expect_snapshot(error = TRUE, {
    device_topology("h100-sxm-80gb", nodes = 3e8)
    device_topology("h100-sxm-80gb", nodes = 3e9)
    device_topology("h100-sxm-80gb", intra_node_bandwidth = "+450GB/s")
    device_topology("h100-sxm-80gb", inter_node_bandwidth = "50 GB")
  })
  big <- device_topology("h100-sxm-80gb", nodes = 2^28 - 1)
  expect_identical(big$devices, as.integer(8 * (2^28 - 1)))
  expect_true(any(grepl("2,147,483,640 devices", format(big), fixed = TRUE)))
})

test_that("a topology edited by hand is checked again, naming the field", {
  topo <- device_topology("h100-sxm-80gb", nodes = 2)
  edited <- function(field, value) {
    topo[field] <- list(value)
    topo
  }
  check <- function(x) kerasmesh:::check_topology(x)
  expect_snapshot(error = TRUE, {
    check(edited("nodes", NA))
    check(edited("nodes", 3e8))
    check(edited("memory", "lots"))
    check(edited("efficiency", 2))
    check(edited("peak_flops", NULL))
    check(edited("inter_node_bandwidth", NA))
  })
  for (field in c("nodes", "memory", "efficiency")) {
    expect_error(check(edited(field, NA)), class = "kerasmesh_error_topology")
  }
  # Devices of another type: the error alone, no coercion warning.
  expect_no_warning(expect_error(check(edited("devices", "zz")),
                                 "topology$devices", fixed = TRUE,
                                 class = "kerasmesh_error_topology"))
  custom <- device_topology(devices_per_node = 2, memory = 1e9,
                            peak_flops = 1e12, intra_node_bandwidth = 1e9)
  expect_true(is.na(custom$inter_node_bandwidth))
  expect_null(check(custom)$inter_node_bandwidth) # not given: none
  one <- device_topology("h100-sxm-80gb")
  one$memory_bandwidth <- NA
  expect_null(check(one)$memory_bandwidth)
})

test_that("peak FLOP/s replace a preset's by dtype, and only dtypes", {
  topo <- device_topology("h100-sxm-80gb", peak_flops = c(bfloat16 = 500e12))
  expect_identical(topo$peak_flops,
                   c(bfloat16 = 500e12, float16 = 989e12, float32 = 495e12))
  expect_identical(device_topology("h100-sxm-80gb", peak_flops = 1e15)$
                     peak_flops, 1e15)
  expect_error(device_topology("h100-sxm-80gb", peak_flops = c(bogus = 1e12)),
               class = "kerasmesh_error_topology")
  expect_snapshot(error = TRUE, {
    device_topology("h100-sxm-80gb", peak_flops = c(bogus = 1e12))
    device_topology("h100-sxm-80gb", efficiency = c(foo = 0.5))
    device_topology("h100-sxm-80gb", memory = "0GB")
    device_topology("h100-sxm-80gb", intra_node_bandwidth = "1e400GB/s")
  })
})

test_that("a topology's devices edited apart from its nodes are refused", {
  topo <- device_topology("h100-sxm-80gb")
  topo$devices <- 16
  expect_snapshot(error = TRUE, kerasmesh:::check_topology(topo))
  expect_error(kerasmesh:::check_topology(topo),
               class = "kerasmesh_error_topology")
  topo$devices <- 8
  expect_identical(kerasmesh:::check_topology(topo)$nodes, 1L)
})
