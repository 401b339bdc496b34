# A cost's modeled time on a topology, how bfloat16 was compiled and the
# tensors XLA reshards by replicating them: pure R from a fixture, then
# the real compiles.

topology_cost <- function(edit = identity) {
  kerasmesh:::new_layout_cost(
    edit(fixture("cost-topology")),
    device_topology("h100-sxm-80gb", nodes = 2, devices_per_node = 4)
  )
}

test_that("a cost on a topology has the parts of its modeled time", {
  cost <- topology_cost()
  time <- cost$time
  expect_named(time, c("compute", "recompute", "parts", "communication",
                       "overlap", "total", "compute_dtype", "flop_rate",
                       "accumulation_steps"))
  expect_named(time$parts, c("matmul", "attention", "memory"))
  expect_named(time$communication, c("axes", "exposed", "hidden"))
  expect_true(all(time$communication$axes %in% names(cost$traffic)))
  # The device waits for compute and for what compute does not hide.
  expect_equal(time$total, time$compute + time$recompute +
                 sum(time$communication$exposed))
  expect_equal(time$compute + time$recompute, sum(time$parts))
  expect_identical(time$compute_dtype, "float32")
  expect_identical(time$flop_rate, 495e12 * 0.72)
  expect_identical(cost$topology$name, "h100-sxm-80gb")
  expect_match(cost$compiled_for$label, "XLA")
  # Without a topology: no time; older descriptions still make a cost.
  plain <- fixture_cost()
  expect_null(plain$time)
  expect_identical(nrow(plain$reshardings), 0L)
  expect_identical(plain$xla_log, character())
})

test_that("a cost prints its time, recomputation, micro-batches and notes", {
  expect_snapshot({
    topology_cost()
    topology_cost(function(d) {
      d$time$recompute <- d$time$compute / 3
      d$time$accumulation_steps <- 4L
      d$bfloat16 <- "float16"
      d$reshardings <- list(
        op_name = list("jit(step)/transformer_layer_0/rotary/unstack"),
        instruction = list("unstack.1"), shape = list("f32[4,16,4,1]"),
        source = list("{devices=[2,1,1,2,2]}"), target = list("{devices=[8]}")
      )
      d
    })
    topology_cost(function(d) {
      d$bfloat16 <- "float32"
      d
    })
  })
  cost <- topology_cost()
  expect_lte(max(nchar(format(cost))), 80)
})

test_that("a GPU topology compiled by the CPU says how to install the GPU's", {
  missing <- list(compiler_missing = TRUE)
  withr::local_options(rlib_message_verbosity = "verbose")
  expect_message(kerasmesh:::inform_gpu_compiler(missing),
                 class = "kerasmesh_message_gpu_compiler")
  expect_snapshot(kerasmesh:::inform_gpu_compiler(missing))
  expect_silent(kerasmesh:::inform_gpu_compiler(list(compiler_missing = FALSE)))
  # Once a session, unless messages are asked for every time.
  withr::local_options(rlib_message_verbosity = NULL)
  rlang::reset_message_verbosity("kerasmesh_gpu_compiler")
  expect_message(kerasmesh:::inform_gpu_compiler(missing))
  expect_silent(kerasmesh:::inform_gpu_compiler(missing))
})

test_that("a comparison on a topology has a time column, printed and drawn", {
  cmp <- kerasmesh:::new_layout_comparison(list(
    a = topology_cost(),
    b = topology_cost(function(d) {
      d$time$total <- 2 * d$time$total
      d
    })
  ))
  expect_equal(cmp$time[2], 2 * cmp$time[1])
  expect_snapshot(cmp)
  expect_match(kerasmesh:::cost_subtitle(cmp, NULL)[2],
               "^Modeled time per global batch: a: .*, b: ")
  expect_null(fixture_comparison()$time)
})

test_that("layout_cost() models a step on a topology whose axes cross nodes", {
  skip_if_no_keras()
  topo <- device_topology("h100-sxm-80gb", nodes = 2, devices_per_node = 4)
  cost <- layout_cost(mlp_builder(), model_parallel(book_layout()),
                      batch_size = 16, optimizer = "adam", loss = "mse",
                      topology = topo)
  time <- cost$time
  expect_setequal(time$communication$axes, c("data", "model"))
  expect_equal(time$total, time$compute + time$recompute +
                 sum(time$communication$exposed))
  # "data" crosses the two nodes; on one node of 8 it does not.
  one <- layout_cost(mlp_builder(), model_parallel(book_layout()),
                     batch_size = 16, optimizer = "adam", loss = "mse",
                     topology = device_topology("h100-sxm-80gb"))
  seconds <- function(t, axis) {
    comm <- t$communication
    sum(comm$exposed[comm$axes == axis], comm$hidden[comm$axes == axis])
  }
  expect_gt(seconds(time, "data"), seconds(one$time, "data"))
  expect_equal(seconds(time, "model"), seconds(one$time, "model"))
  expect_identical(cost$bfloat16, "absent")
})

test_that("compare_layouts() gives each layout its modeled time", {
  skip_if_no_keras()
  cmp <- compare_layouts(
    mlp_builder(), list(dp = data_parallel(),
                        mp = model_parallel(book_layout())),
    batch_size = 16, optimizer = "adam", loss = "mse",
    topology = device_topology("a100-sxm-80gb")
  )
  costs <- attr(cmp, "costs")
  expect_equal(cmp$time, c(costs$dp$time$total, costs$mp$time$total))
  expect_identical(costs$mp$topology$name, "a100-sxm-80gb")
})

test_that("a topology of another device count, or none, is an error", {
  skip_if_no_keras()
  expect_snapshot(error = TRUE, {
    layout_cost(mlp_builder(), data_parallel(), batch_size = 16,
                loss = "mse",
                topology = device_topology("h100-sxm-80gb", nodes = 4))
    layout_cost(mlp_builder(), data_parallel(), batch_size = 16,
                loss = "mse", topology = "h100-sxm-80gb")
  })
  expect_error(
    compare_layouts(mlp_builder(), list(dp = data_parallel()),
                    batch_size = 16, loss = "mse",
                    topology = device_topology("a100-sxm-80gb", nodes = 2)),
    class = "kerasmesh_error_topology_devices"
  )
  expect_error(
    layout_cost(mlp_builder(), data_parallel(), batch_size = 16,
                loss = "mse", topology = device_topology(
                  devices_per_node = 8, memory = "1GB",
                  peak_flops = c(bfloat16 = 1e12), intra_node_bandwidth = 1e9
                )),
    class = "kerasmesh_error_topology"
  )
})

test_that("a mixed_bfloat16 step is costed at 2 bytes, as on a GPU", {
  skip_if_no_keras()
  keras <- keras()
  build <- function(policy) {
    function() {
      keras$Sequential(list(
        keras$Input(shape = list(64L)),
        keras$layers$Dense(128L, name = "dense", dtype = policy),
        keras$layers$Dense(64L, name = "dense_1", dtype = policy)
      ), name = "sequential")
    }
  }
  lm <- layout_map(book_mesh(), ".*dense/kernel" = c(NA, "model"),
                   ".*dense_1/kernel" = c("model", NA))
  cost <- function(policy) {
    layout_cost(build(policy), model_parallel(lm), batch_size = 16,
                optimizer = "adam", loss = "mse")
  }
  f32 <- cost("float32")
  bf16 <- cost("mixed_bfloat16")
  activation <- function(c) {
    c$ops$bytes[c$ops$collective == "all-reduce" & c$ops$axes == "model"]
  }
  expect_identical(activation(bf16), activation(f32) / 2)
  # Not half: Adam's float32 slots keep float32 temporaries of their own.
  expect_lt(bf16$xla[["temp"]], 0.85 * f32$xla[["temp"]])
  expect_identical(bf16$bfloat16, "float16")
  expect_identical(bf16$compute_dtype, "bfloat16")
  expect_match(format(bf16), "bfloat16 costed at 2 bytes", all = FALSE)
})

test_that("bfloat16 attention is costed as GPUs fuse it, float32 as written", {
  skip_if_no_keras_hub()
  hub <- reticulate::import("keras_hub")
  build <- function(dtype) {
    function() {
      hub$models$Llama3Backbone(
        vocabulary_size = 256L, num_layers = 1L, num_query_heads = 8L,
        num_key_value_heads = 2L, hidden_dim = 32L, intermediate_dim = 64L,
        dtype = dtype
      )
    }
  }
  # 1024 tokens: two blocks of 512 queries.
  cost <- function(dtype) {
    layout_cost(build(dtype), data_parallel(), batch_size = 8,
                optimizer = "adam",
                input_shapes = list(token_ids = 1024, padding_mask = 1024))
  }
  bf16 <- cost("mixed_bfloat16")
  f32 <- cost("float32")
  expect_identical(bf16$attention, "blocks")
  expect_identical(f32$attention, "written")
  expect_match(format(bf16), "attention computed in blocks, as GPUs' fused",
               all = FALSE)
  expect_false(any(grepl("fused attention", format(f32))))
  # float32 keeps 8 heads x 1024 x 1024 float32 scores per sequence
  # (32 MiB); blocked bfloat16 keeps one block's at a time.
  expect_lt(bf16$xla[["temp"]], f32$xla[["temp"]] - 2^25)
})

test_that("a layout XLA reshards by replicating is reported, not printed", {
  skip_if_no_keras_hub()
  lm <- layout_map(hub_mesh(), ".*query.*kernel" = c(NA, NA, "model"))
  cost <- layout_cost(
    hub_builder("llama", kv_heads = 4L, num_layers = 1L),
    model_parallel(lm, batch_dim_name = "batch"), batch_size = 8,
    optimizer = "adam",
    input_shapes = list(token_ids = 16, padding_mask = 16)
  )
  expect_gt(nrow(cost$reshardings), 0)
  expect_true(any(grepl("rotary", cost$reshardings$op_name)))
  expect_match(format(cost), "XLA replicates .* in full to reshard",
               all = FALSE)
})

test_that("the plot of a cost on a topology gives its time", {
  expect_picture("cost on a topology", function() plot(topology_cost()))
})
