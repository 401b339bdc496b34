# device_topology()'s presets and their figures. Pure R: no Python.

test_that("a preset gives its figures per device, for any number of nodes", {
  topo <- device_topology("h100-sxm-80gb", nodes = 4)
  expect_s3_class(topo, "kerasmesh_device_topology")
  expect_identical(topo$name, "h100-sxm-80gb")
  expect_identical(c(topo$nodes, topo$devices_per_node, topo$devices),
                   c(4L, 8L, 32L))
  expect_identical(topo$memory, 80e9)
  expect_identical(topo$peak_flops[["bfloat16"]], 989e12)
  expect_identical(topo$peak_flops[["float32"]], 495e12)
  # NCCL's bus bandwidths, and what a step's operations reach.
  expect_identical(c(topo$intra_node_bandwidth, topo$all_reduce_bandwidth,
                     topo$inter_node_bandwidth), c(370e9, 480e9, 47e9))
  expect_identical(topo$efficiency,
                   c(matmul = 0.72, attention = 0.5, memory = 0.9))
  expect_identical(topo$given, character())
  h200 <- device_topology("h200-sxm-141gb")
  expect_identical(c(h200$memory, h200$memory_bandwidth), c(141e9, 4.8e12))
  expect_identical(h200$peak_flops, topo$peak_flops)
  a100 <- device_topology("a100-sxm-80gb")
  expect_identical(a100$peak_flops[["bfloat16"]], 312e12)
  expect_identical(c(a100$intra_node_bandwidth, a100$all_reduce_bandwidth,
                     a100$inter_node_bandwidth), c(200e9, 200e9, 23e9))
  expect_identical(a100$efficiency,
                   c(matmul = 0.77, attention = 0.6, memory = 0.9))
  expect_identical(a100$nodes, 1L)
})
