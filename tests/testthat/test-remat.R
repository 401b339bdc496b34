test_that("fit() under model_parallel() gives the same losses with remat", {
  skip_if_no_keras()
  data <- residual_blocks_data()
  train <- function(remat) {
    with_distribution(model_parallel(residual_blocks_layout()), {
      model <- residual_blocks_model()
      expect_identical(set_remat(model, remat), model)
      model$compile(optimizer = keras()$optimizers$Adam(0.01), loss = "mse")
      history <- model$fit(data$x, data$y, batch_size = 16L, epochs = 3L,
                           shuffle = FALSE, verbose = 0L)
      unlist(history$history$loss)
    })
  }
  plain <- train("none")
  per_block <- c("full", "none", "save_matmuls")
  for (remat in list("full", "save_matmuls", per_block)) {
    again <- train(remat)
    expect_length(again, 3)
    expect_equal(again, plain, tolerance = 1e-5)
  }
  expect_true(all(diff(plain) < 0))
})

test_that("set_remat() finds a backbone's blocks and undoes itself", {
  skip_if_no_keras_hub()
  model <- hub_builder("llama", kv_heads = 2L)()
  blocks <- model$transformer_layers
  builtins <- reticulate::import_builtins(convert = FALSE)
  marked <- function() {
    unlist(reticulate::iterate(blocks, function(b) {
      reticulate::py_to_r(builtins$hasattr(b$call, "_kerasmesh_remat"))
    }))
  }
  expect_identical(marked(), c(FALSE, FALSE, FALSE))
  set_remat(model, "save_matmuls")
  expect_identical(marked(), c(TRUE, TRUE, TRUE))
  set_remat(model, "none")
  expect_identical(marked(), c(FALSE, FALSE, FALSE))
})

test_that("set_remat() explains a model without blocks and bad arguments", {
  skip_if_no_keras()
  model <- build_mlp()
  expect_snapshot(error = TRUE, {
    set_remat(model)
    set_remat(model, "full", layers = c("dense", "nope"))
  })
  expect_error(set_remat(model), class = "kerasmesh_error_remat_blocks")
  expect_invisible(set_remat(model, "full", layers = c("dense", "dense_1")))
  set_remat(model, "none")
})

test_that("set_remat() checks its arguments before Python starts", {
  expect_snapshot(error = TRUE, {
    set_remat("model")
    remat <- "dots"
    check_remat(remat)
    remat <- 2
    check_remat(remat)
    remat <- NA_character_
    check_remat(remat, allow_null = TRUE)
  })
  expect_error(check_remat("FULL"), class = "kerasmesh_error_remat")
  expect_null(check_remat(NULL, allow_null = TRUE))
  expect_identical(check_remat("save_matmuls"), "save_matmuls")
  # One per block: a list for the shim; a wrong one is named.
  expect_identical(check_remat(c("full", "save_matmuls")),
                   list("full", "save_matmuls"))
  expect_error(check_remat(c("full", "dots")), class = "kerasmesh_error_remat",
               regexp = "dots")
  expect_error(check_remat(character()), class = "kerasmesh_error_remat")
})

test_that("a remat per block reads as runs, in words and as R code", {
  per_block <- rep(c("full", "save_matmuls"), c(4, 28))
  expect_identical(remat_label("full"), '"full"')
  expect_identical(remat_label(NULL), '"none"')
  expect_identical(remat_label(as.list(per_block)),
                   '"full" x4, "save_matmuls" x28')
  expect_identical(remat_code(per_block),
                   'rep(c("full", "save_matmuls"), c(4, 28))')
  expect_identical(eval(parse(text = remat_code(per_block))), per_block)
  expect_identical(remat_code("none"), '"none"')
})

test_that("a cost takes one remat per block and prints its runs", {
  skip_if_no_keras()
  per_block <- rep(c("full", "save_matmuls"), c(1, 2))
  cost <- layout_cost(residual_blocks_model, model_parallel(
    residual_blocks_layout()), batch_size = 16, optimizer = "adam",
    loss = "mse", remat = per_block)
  expect_identical(cost$remat, per_block)
  expect_gt(cost$recompute_flops, 0)
  expect_true(any(grepl('remat per block "full" x1, "save_matmuls" x2',
                        format(cost), fixed = TRUE)))
  expect_error(layout_cost(residual_blocks_model, model_parallel(
    residual_blocks_layout()), batch_size = 16, remat = c("full", "full")),
    class = "kerasmesh_error_remat")
})
