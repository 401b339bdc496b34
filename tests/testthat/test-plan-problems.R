# Grouped problems and their fixes, on keras-hub transformers.

for (family in names(hub_families)) {
  test_that(paste(family, "backbone: its own layout map fails on one key/value",
                  "head, grouped, and the fix plans clean"), {
    skip_if_no_keras_hub()
    build <- hub_builder(family, kv_heads = 1L)
    keras_lm <- hub_layout_map(family)
    plan <- layout_plan(build, keras_lm)
    groups <- attr(plan, "groups")
    errors <- groups[groups$severity == "error", , drop = FALSE]
    expect_identical(nrow(errors), 1L)
    expect_identical(errors$kind, "layout_divisibility")
    expect_identical(errors$count, 6L)
    expect_identical(errors$listing[[1]], hub_families[[family]]$listing)
    expect_identical(errors$size, 1)
    expect_identical(errors$axis_size,
                     c(batch = 2L, model = 4L)[[errors$axis]])
    # One error for the rule, naming how many variables it hits.
    # (Llama and Qwen also warn about their untied output embeddings.)
    err <- suppressWarnings(
      expect_error(check_layout(plan),
                   class = "kerasmesh_error_layout_divisibility"),
      classes = c("kerasmesh_warning_replicated",
                  "kerasmesh_warning_block_outputs")
    )
    expect_match(conditionMessage(err), "can't split 6 variables evenly")
    expect_match(conditionMessage(err), "layout_fix")
    # The fix, pasted, plans clean.
    code <- layout_fix(plan)
    expect_s3_class(code, "kerasmesh_layout_fix")
    expect_match(code[1], "<- NULL$")
    lm <- as_layout_map(keras_lm)
    eval(parse(text = code))
    fixed <- layout_plan(build, lm)
    expect_false(any(attr(fixed, "problems")$severity == "error"))
    expect_identical(nrow(fixed), nrow(plan))
    expect_lt(summary(fixed)$device_weights, summary(plan)$bytes)
  })

  test_that(paste(family, "backbone: its own layout map works when the",
                  "heads divide, with the blocks' output rule as its fix"), {
    skip_if_no_keras_hub()
    build <- hub_builder(family, kv_heads = 4L)
    # keras-hub splits weights over the batch axis and another, and lays
    # no block's output out: XLA may all-reduce activations in every block.
    expect_warning(
      plan <- check_layout(build, hub_layout_map(family),
                           replicated_share = 1),
      class = "kerasmesh_warning_block_outputs"
    )
    expect_s3_class(plan, "kerasmesh_layout_plan")
    code <- layout_fix(plan)
    expect_length(code, 1)
    expect_true(endsWith(code, "/output\"]] <- c(\"batch\", NA, NA)"))
    lm <- as_layout_map(hub_layout_map(family))
    eval(parse(text = code))
    expect_no_warning(check_layout(build, lm, replicated_share = 1))
  })
}

test_that("check_layout() accepts a plan and Keras's ModelParallel", {
  skip_if_no_keras_hub()
  build <- hub_builder("gemma", kv_heads = 4L)
  keras <- reticulate::import("keras")
  dist <- keras$distribution$ModelParallel(
    layout_map = hub_layout_map("gemma"), batch_dim_name = "batch")
  plan <- layout_plan(build, dist, batch_size = 8)
  expect_identical(summary(plan)$batch_dim_name, "batch")
  quietly <- function(x) {
    suppressWarnings(x, classes = "kerasmesh_warning_block_outputs")
  }
  expect_identical(quietly(check_layout(plan)), plan)
  expect_invisible(quietly(check_layout(plan)))
  # A plan is checked as made: nothing more is taken, rather than ignored.
  expect_error(check_layout(plan, dist), "not taken with one",
               class = "kerasmesh_error_argument")
  expect_error(check_layout(plan, batch_size = 3), "batch_size",
               class = "kerasmesh_error_argument")
  expect_error(layout_plan(build, keras$layers$Dense(2L)),
               class = "kerasmesh_error_layout_map")
})

test_that("a big unmatched variable warns, named, with a rule that splits it", {
  skip_if_no_keras_hub()
  build <- hub_builder("llama", kv_heads = 4L)
  keras_lm <- hub_layout_map("llama")
  quietly <- function(x) {
    suppressWarnings(x, classes = "kerasmesh_warning_block_outputs")
  }
  w <- quietly(expect_warning(check_layout(build, keras_lm),
                              class = "kerasmesh_warning_replicated"))
  expect_match(conditionMessage(w), "token_embedding/reverse_embeddings",
               fixed = TRUE)
  plan <- layout_plan(build, keras_lm)
  lm <- as_layout_map(keras_lm)
  eval(parse(text = layout_fix(plan)))
  expect_no_warning(fixed <- check_layout(build, lm))
  expect_lt(summary(fixed)$device_weights, summary(plan)$device_weights)
  # The share is an argument and an option.
  expect_no_warning(quietly(check_layout(build, keras_lm,
                                         replicated_share = 0.9)))
  withr::local_options(kerasmesh.replicated_share = 0.9)
  expect_no_warning(quietly(check_layout(build, keras_lm)))
  expect_error(layout_plan(build, keras_lm, replicated_share = 2),
               class = "kerasmesh_error_argument")
})

test_that("replicated LoRA factors don't warn; other replicated weights do", {
  skip_if_no_keras()
  lora <- function() {
    model <- build_mlp()
    model$get_layer("dense")$enable_lora(rank = 8L)
    model
  }
  lm <- layout_map(book_mesh(), "sequential/dense/kernel" = c(NA, "model"),
                   "sequential/dense_1/kernel" = c(NA, "model"),
                   ".*bias" = NA)
  # Only the factors (32 x 8 and 8 x 64) are left replicated, each far
  # above a share of 0.1 % of a device's weights.
  plan <- layout_plan(lora, lm, replicated_share = 0.001)
  unmatched <- plan$path[is.na(plan$rule)]
  expect_setequal(unmatched, c("sequential/dense/lora_kernel_a",
                               "sequential/dense/lora_kernel_b"))
  expect_no_warning(check_layout(plan))
  # A weight that merely sits beside them still warns, once.
  lm[["sequential/dense_1/kernel"]] <- NULL
  w <- expect_warning(check_layout(lora, lm, replicated_share = 0.001),
                      class = "kerasmesh_warning_replicated")
  expect_match(conditionMessage(w), "sequential/dense_1/kernel", fixed = TRUE)
  expect_no_match(conditionMessage(w), "lora")
})

test_that("a transformer's plan prints grouped, within 80 columns", {
  skip_if_no_keras_hub()
  plan <- layout_plan(hub_builder("gemma", kv_heads = 1L, num_layers = 18L),
                      hub_layout_map("gemma"))
  lines <- format(plan, width = 80)
  expect_true(all(nchar(lines) <= 80))
  expect_snapshot(print(plan, width = 80, n = 6))
  # Block numbers stay visible.
  expect_true(any(grepl("decoder_block_0/", lines, fixed = TRUE)))
  s <- summary(plan)
  expect_equal(sum(s$by_rule$device_bytes), s$device_weights)
  expect_identical(sum(s$by_rule$variables), nrow(plan))
  expect_true(all(nchar(format(s)) <= 80))
})

test_that("plot() aggregates 700+ variables by layer or rule", {
  skip_if_no_keras_hub()
  plan <- layout_plan(hub_builder("llama", kv_heads = 4L, num_layers = 80L),
                      hub_layout_map("llama"))
  expect_gt(nrow(plan), 700)
  parts <- plan_memory_parts(plan, "layer", "weights", n = 10)
  expect_lte(nrow(parts), 12)
  expect_true(any(grepl("transformer_layer_*/", parts$group, fixed = TRUE)))
  by_rule <- plan_memory_parts(plan, "rule", "weights")
  expect_setequal(by_rule$group, c(names(as_layout_map(
    hub_layout_map("llama"))), "(no rule)"))
  pdf(NULL)
  on.exit(grDevices::dev.off(), add = TRUE)
  expect_invisible(plot(plan, by = "rule"))
  expect_invisible(plot(plan))
})

test_that("fix code and path helpers work without Python", {
  fix <- list(remove = "a.*(b|c).kernel",
              add = list(list(key = "a_\\d+/b/kernel", axes = c("model", NA)),
                         list(key = "a_\\d+/c/kernel", axes = c(NA, "model"))))
  code <- fix_code(fix)
  expect_identical(code[1], 'lm[["a.*(b|c).kernel"]] <- NULL')
  expect_identical(code[2], 'lm[["a_\\\\d+/b/kernel"]] <- c("model", NA)')
  expect_identical(eval(parse(text = sub("^.*<- ", "", code[2]))),
                   c("model", NA))
  expect_identical(path_prefix(c("seq/dense/kernel", "seq/dense_1/bias")),
                   "seq/")
  expect_identical(path_prefix(c("block_1/w", "block_2/w")), "")
  cut <- truncate_path("decoder_block_17/attention/value/kernel", 30)
  expect_lte(nchar(cut), 30)
  expect_match(cut, "^decoder_block_17/")
  expect_match(cut, "kernel$")
})

test_that("a path prefix all variables share is shown once", {
  skip_if_no_keras()
  keras <- reticulate::import("keras")
  build <- function() {
    keras$Sequential(list(
      keras$Input(shape = list(16L)),
      keras$layers$Dense(64L, name = "block_0"),
      keras$layers$Dense(8L, name = "block_1")
    ), name = "stack")
  }
  lm <- layout_map(book_mesh(), "stack/block_\\d+/kernel" = c(NA, "model"))
  lines <- format(layout_plan(build, lm), width = 80)
  expect_identical(lines[2], 'Paths below "stack/":')
  expect_true(any(grepl("^\\s+block_1/kernel", lines)))
  expect_false(any(grepl("^\\s+stack/block", lines)))
})

test_that("check_layout() of a plan raises its errors with each kind's class", {
  plan <- fixture_plan("plan-errors")
  err <- expect_error(
    suppressWarnings(check_layout(plan)),
    class = "kerasmesh_error_layout_plan"
  )
  expect_s3_class(err, c("kerasmesh_error_layout_divisibility",
                         "kerasmesh_error_batch_size", "kerasmesh_error"))
  expect_identical(nrow(err$problems), 2L)
  expect_identical(err$plan, plan)
  # The warning comes first, with its own classes.
  w <- expect_warning(
    tryCatch(check_layout(plan), kerasmesh_error = function(e) NULL),
    class = "kerasmesh_warning_unmatched_rule"
  )
  expect_s3_class(w, c("kerasmesh_warning_layout_plan", "kerasmesh_warning"))
  expect_snapshot(error = TRUE, check_layout(plan))
})

test_that("a transformer's divisibility errors are one condition with a fix", {
  plan <- fixture_plan("plan-gemma-one-kv-head")
  groups <- attr(plan, "groups")
  # The error, and the warning that keras-hub's map lays no block output.
  expect_identical(groups$kind, c("layout_divisibility", "block_outputs"))
  error <- groups[groups$kind == "layout_divisibility", ]
  expect_identical(error$count, 6L)
  expect_identical(error$listing[[1]],
                   "decoder_block_{0..2}/attention/{key,value}/kernel")
  expect_identical(error$size, 1)
  expect_identical(error$axis_size, 4L)
  err <- suppressWarnings(
    expect_error(check_layout(plan),
                 class = "kerasmesh_error_layout_divisibility"),
    classes = "kerasmesh_warning_block_outputs"
  )
  expect_match(conditionMessage(err), "can't split 6 variables evenly")
  expect_match(conditionMessage(err), "layout_fix")
  expect_snapshot(error = TRUE, check_layout(plan))
})

test_that("a replicated variable warns and the plan comes back invisibly", {
  plan <- fixture_plan("plan-llama-replicated")
  w <- suppressWarnings(
    expect_warning(check_layout(plan), class = "kerasmesh_warning_replicated"),
    classes = "kerasmesh_warning_block_outputs"
  )
  expect_match(conditionMessage(w), "token_embedding/reverse_embeddings",
               fixed = TRUE)
  expect_identical(suppressWarnings(check_layout(plan)), plan)
  expect_snapshot(check_layout(plan))
})

test_that("check_layout() passes a clean plan through, invisibly", {
  plan <- fixture_plan()
  expect_invisible(check_layout(plan))
  expect_identical(check_layout(plan), plan)
  expect_no_warning(check_layout(fixture_plan("plan-outputs")))
})

test_that("layout_fix() writes the planner's fixes as R code", {
  gemma <- layout_fix(fixture_plan("plan-gemma-one-kv-head"))
  expect_s3_class(gemma, "kerasmesh_layout_fix")
  expect_match(gemma[1], "<- NULL$")
  expect_identical(
    unclass(layout_fix(fixture_plan("plan-llama-replicated"), name = "rules")),
    c('rules[["token_embedding/reverse_embeddings"]] <- c("batch", "model")',
      'rules[["transformer_layer_\\\\d+/output"]] <- c("batch", NA, NA)')
  )
  # Long lines wrap after the assignment.
  expect_true(all(nchar(gemma) <= 80))
  expect_snapshot({
    layout_fix(fixture_plan("plan-gemma-one-kv-head"))
    layout_fix(fixture_plan("plan-errors"), name = "m")
    layout_fix(fixture_plan())
  })
})

test_that("the fix code parses and names the keys it changes", {
  code <- layout_fix(fixture_plan("plan-errors"))
  exprs <- parse(text = code)
  expect_length(exprs, 3)
  keys <- vapply(exprs, function(e) e[[2]][[3]], "")
  expect_identical(keys, c(".*kernel", "sequential/dense_1/kernel",
                           "sequential/dense/kernel"))
  expect_identical(eval(exprs[[3]][[3]]), c("model", NA))
})

test_that("layout_fix() and check_layout() refuse what is not a plan", {
  expect_error(layout_fix(fixture_layout_map()),
               class = "kerasmesh_error_argument")
  expect_error(layout_fix(data.frame(path = "a")),
               class = "kerasmesh_error_argument")
  expect_error(layout_fix(fixture_plan(), name = 1),
               class = "kerasmesh_error_argument")
  expect_error(layout_fix(fixture_plan(), name = c("a", "b")),
               class = "kerasmesh_error_argument")
  expect_error(layout_fix(fixture_plan(), name = NA_character_),
               class = "kerasmesh_error_argument")
  expect_error(check_layout(function() NULL, "lm"),
               class = "kerasmesh_error_layout_map")
  expect_snapshot(error = TRUE, {
    layout_fix(NULL)
    layout_fix(fixture_plan(), name = "")
  })
})
