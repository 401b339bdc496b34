test_that("input shapes and losses go to the shim as plain values", {
  to_shapes <- kerasmesh:::check_input_shapes
  expect_identical(to_shapes(list(token_ids = 128, padding_mask = c(4, 8))),
                   list(token_ids = list(128L), padding_mask = list(4L, 8L)))
  expect_null(to_shapes(NULL))
  to_loss <- kerasmesh:::check_loss
  expect_identical(to_loss("mse"), "mse")
  expect_identical(to_loss(c("mse", "mae")), list("mse", "mae"))
  expect_identical(to_loss(list(a = "mse", b = "mae")),
                   list(a = "mse", b = "mae"))
  expect_null(to_loss(NULL))
})
