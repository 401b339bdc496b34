# `optimizer = NULL` means the model's compiled optimizer, in every function
# that costs or plans one: layout_plan(), layout_cost(), compare_layouts()
# and search_layout(), for an optimizer made in the builder too.

adam <- function() keras()$optimizers$Adam(learning_rate = 0.01)
loss_scaled <- function() {
  keras()$optimizers$LossScaleOptimizer(keras()$optimizers$Adam())
}

for (case in list(list("Adam", adam), list("LossScaleOptimizer",
                                           loss_scaled))) {
  test_that(paste("optimizer = NULL costs the compiled", case[[1]]), {
    skip_if_no_keras()
    name <- case[[1]]
    make <- case[[2]]
    build <- recompiled(search_net, make)
    mesh <- device_mesh(c(data = 2, model = 4))
    lm <- layout_map(mesh, "net/dense/kernel" = c(NA, "model"),
                     "net/dense/bias" = NA)
    expected <- summary(layout_plan(search_net, lm, optimizer = make()))
    expect_identical(expected$optimizer, name)
    # More than SGD's two scalars (8 B): the slots of every weight.
    expect_gt(expected$device_optimizer, 2 * expected$device_weights)

    planned <- summary(layout_plan(build, lm))
    expect_identical(planned$optimizer, name)
    expect_equal(planned$device_optimizer, expected$device_optimizer)
    cost <- layout_cost(build, model_parallel(lm), batch_size = 16)
    expect_equal(cost$memory[["optimizer"]], expected$device_optimizer)
    compared <- compare_layouts(build, list(mp = model_parallel(lm)),
                                batch_size = 16)
    expect_equal(compared$optimizer, expected$device_optimizer)

    found <- within_seconds(
      search_layout(build, mesh, batch_size = 16,
                    fixed = layout_map(mesh, "net/dense/bias" = NA)),
      120
    )
    at_found <- summary(layout_plan(search_net, as_layout_map(found),
                                    optimizer = make()))
    expect_equal(found$cost$memory[["optimizer"]], at_found$device_optimizer)
    expect_gt(found$cost$memory[["optimizer"]], 8)
  })
}
