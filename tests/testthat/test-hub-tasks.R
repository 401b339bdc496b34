# keras-hub task models (a CausalLM compiles itself, with an optimizer of
# its own, when it is made) plan, cost and search like their backbones.

test_that("a Gemma CausalLM with LoRA plans with its own Adam", {
  skip_if_no_keras_hub()
  lm <- hub_layout_map("gemma")
  plan <- layout_plan(hub_causal_lm_builder(), lm)
  s <- summary(plan)
  expect_identical(s$optimizer, "Adam")
  # Only the LoRA factors train, and Adam keeps two slots for each of them
  # (laid out like them) and two scalars: the frozen kernels have none.
  trainable <- plan$path[plan$trainable]
  expect_length(trainable, 8)
  expect_true(all(grepl("/lora_kernel_[ab]$", trainable)))
  expect_equal(s$device_optimizer,
               2 * sum(plan$device_bytes[plan$trainable]) + 8)
  expect_equal(s$replicated_optimizer, 2 * sum(plan$bytes[plan$trainable]) + 8)
  # Replicated LoRA factors are the usual choice: no warning for them,
  # only keras-hub's map's, that no rule lays the blocks' outputs out.
  expect_no_warning(suppressWarnings(
    check_layout(plan), classes = "kerasmesh_warning_block_outputs"
  ))
})

test_that("a Gemma CausalLM with LoRA costs and searches", {
  skip_if_no_keras_hub()
  mesh <- hub_mesh()
  lm <- hub_layout_map("gemma", mesh)
  dist <- model_parallel(lm, batch_dim_name = "batch")
  build <- hub_causal_lm_builder()
  cost <- layout_cost(build, dist, batch_size = 8,
                      input_shapes = hub_task_inputs)
  expect_equal(cost$memory[["optimizer"]],
               summary(layout_plan(build, lm))$device_optimizer)
  expect_gt(cost$xla[["total"]], 0)
  # The backbone's own map, the LoRA factors and two of the three
  # normalization scales pinned: the search places the third.
  fixed <- as_layout_map(lm)
  fixed[[".*lora_kernel_a"]] <- c(NA, NA, NA)
  fixed[[".*lora_kernel_b"]] <- c(NA, NA)
  fixed[[".*(pre_ffw_norm|final_normalization)/scale"]] <- NA
  found <- within_seconds(
    search_layout(build, mesh, batch_size = 8, input_shapes = hub_task_inputs,
                  fixed = fixed, timeout = 120),
    150
  )
  expect_identical(found$method, "exhaustive")
  expect_s3_class(found, "kerasmesh_layout_search")
  expect_equal(found$cost$memory[["optimizer"]],
               summary(layout_plan(build, as_layout_map(found)))$
                 device_optimizer)
})
