# device_topology(): a preset's figures replaced by name, and hardware of
# your own. Pure R: no Python.

test_that("any figure of a preset is replaced by name, and said so", {
  topo <- device_topology("h100-sxm-80gb", devices_per_node = 4,
                          memory = "96GB", inter_node_bandwidth = "400Gb/s",
                          efficiency = c(attention = 0.3), nodes = 2)
  expect_identical(topo$devices, 8L)
  expect_identical(topo$memory, 96e9)
  expect_identical(topo$inter_node_bandwidth, 50e9)
  # Efficiencies not given stay the preset's; one number is matmul's.
  expect_identical(topo$efficiency,
                   c(matmul = 0.72, attention = 0.3, memory = 0.9))
  expect_identical(
    device_topology("h100-sxm-80gb", efficiency = 0.6)$efficiency[["matmul"]],
    0.6
  )
  expect_setequal(topo$given, c("devices_per_node", "memory",
                                "inter_node_bandwidth", "efficiency"))
  # A link whose figures were replaced is no longer the preset's link.
  expect_true(is.na(topo$links[["inter"]]))
  expect_identical(topo$links[["intra"]], "NVLink 4 through NVSwitch")
})

test_that("hardware of your own needs its figures and defaults the rest", {
  topo <- device_topology(devices_per_node = 4, memory = "24GB",
                          peak_flops = c(bfloat16 = 165e12, float32 = 83e12),
                          intra_node_bandwidth = "32GB/s")
  expect_identical(topo$name, "custom")
  expect_identical(topo$devices, 4L)
  expect_identical(c(topo$intra_node_latency, topo$inter_node_latency),
                   c(0, 0))
  expect_identical(topo$efficiency,
                   c(matmul = 0.7, attention = 0.5, memory = 0.9))
  expect_true(is.na(topo$inter_node_bandwidth))
  expect_true(is.na(topo$all_reduce_bandwidth))
  expect_true(is.na(topo$memory_bandwidth))
  one <- device_topology(devices_per_node = 2, memory = 1e9,
                         peak_flops = 1e12, intra_node_bandwidth = 1e9)
  expect_null(names(one$peak_flops))
})
