test_that("compare_layouts() puts data and model parallelism side by side", {
  skip_if_no_keras()
  cmp <- compare_layouts(
    mlp_builder(),
    list(data_parallel = data_parallel(),
         model_parallel = model_parallel(book_layout())),
    batch_size = 16, optimizer = "adam", loss = "mse",
    memory = "30kB"
  )
  expect_s3_class(cmp, "kerasmesh_layout_comparison")
  expect_identical(cmp$layout, c("data_parallel", "model_parallel"))
  # Full weights on every device against a quarter of them.
  expect_equal(cmp$weights[1], 4 * cmp$weights[2])
  expect_identical(cmp$fits, c(FALSE, TRUE))
  traffic <- attr(cmp, "traffic")
  expect_setequal(traffic$layout, cmp$layout)
  df <- as.data.frame(cmp)
  expect_identical(class(df), "data.frame")
  out <- format(cmp)
  expect_true(all(nchar(out) <= 80))
  expect_true(any(grepl("Traffic by mesh axis", out)))
})

test_that("a device memory marks which layouts fit", {
  expect_identical(fixture_comparison("30kB")$fits, c(FALSE, TRUE))
  expect_identical(fixture_comparison(1e6)$fits, c(TRUE, TRUE))
  expect_identical(attr(fixture_comparison("1 MiB"), "memory"),
                   structure(2^20, label = "1 MiB"))
})
