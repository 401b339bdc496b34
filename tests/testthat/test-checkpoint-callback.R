# callback_checkpoint(): checkpoints saved while fit() trains. Background
# saves through the callback are in test-checkpoint-background.R.

test_that("callback_checkpoint() names `unit` when it is not one it knows", {
  for (bad in list("batch", NA_character_, 1, c("epoch", "batch"))) {
    e <- expect_error(callback_checkpoint("dir", unit = bad),
                      class = "kerasmesh_error_argument")
    expect_match(conditionMessage(e), "`unit`", fixed = TRUE)
  }
})

test_that("a step callback that can't save its steps stops fit() at start", {
  skip_if_no_keras()
  dir <- withr::local_tempdir("checkpoint")
  model <- build_mlp()
  model$compile(optimizer = "adam", loss = "mse", steps_per_execution = 4L)
  cb <- callback_checkpoint(dir, every = 3, unit = "step")
  data <- mlp_data()
  e <- expect_error(
    with_kerasmesh_errors(model$fit(data$x, data$y, batch_size = 16L,
                                    verbose = 0L, callbacks = list(cb))),
    class = "kerasmesh_error_argument"
  )
  expect_match(conditionMessage(e), "`steps_per_execution` is 4", fixed = TRUE)
  expect_length(list.files(dir), 0)
})
