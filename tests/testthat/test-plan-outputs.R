# Rules for layer outputs: Keras's own end-to-end output-sharding case.

output_sharding_layout <- function(mesh, ...) {
  layout_map(mesh, ".*dense.*kernel" = c(NA, "model"),
             ".*dense.*bias" = "model",
             ".*dense.*output" = c("batch", NA), ...)
}

test_that("output rules are listed with their layers, not as unmatched", {
  skip_if_no_keras()
  mesh <- device_mesh(c(batch = 2, model = 4))
  lm <- output_sharding_layout(mesh)
  expect_no_warning(plan <- check_layout(output_sharding_model, lm))
  s <- summary(plan)
  expect_length(s$unmatched, 0)
  expect_identical(s$outputs$key, ".*dense.*output")
  expect_identical(s$outputs$layers, 2L)
  expect_identical(s$outputs$classes[[1]], "Dense")
  expect_true(any(grepl("Rules for layer outputs", format(plan))))
})

test_that("an output rule that matches no layer warns", {
  skip_if_no_keras()
  mesh <- device_mesh(c(batch = 2, model = 4))
  lm <- output_sharding_layout(mesh, "encoder.*output" = c("batch", NA))
  w <- expect_warning(check_layout(output_sharding_model, lm),
                      class = "kerasmesh_warning_unmatched_output_rule")
  expect_match(conditionMessage(w), "no layer output")
})

test_that("fit() with an output rule gives no false warning", {
  skip_if_no_keras()
  mesh <- device_mesh(c(batch = 2, model = 4))
  with_distribution(model_parallel(output_sharding_layout(mesh)), {
    model <- output_sharding_model()
    model$compile(loss = "mse")
    x <- numpy_array(array(0, c(16, 28, 28, 1)))
    y <- numpy_array(matrix(0, 16, 16))
    # The guard's warnings are R warnings, even from a direct model$fit().
    expect_no_warning(model$fit(x, y, batch_size = 8L, verbose = 0L))
  })
})

test_that("the guard's warnings reach a direct fit() as R warnings", {
  skip_if_no_keras()
  mesh <- device_mesh(c(batch = 2, model = 4))
  lm <- output_sharding_layout(mesh, "encoder.*output" = c("batch", NA))
  with_distribution(model_parallel(lm), {
    model <- output_sharding_model()
    model$compile(loss = "mse")
    x <- numpy_array(array(0, c(16, 28, 28, 1)))
    y <- numpy_array(matrix(0, 16, 16))
    w <- expect_warning(model$fit(x, y, batch_size = 8L, verbose = 0L),
                        class = "kerasmesh_warning_unmatched_output_rule")
    expect_s3_class(w, "kerasmesh_warning")
    expect_match(conditionMessage(w), "no layer output")
  })
})
