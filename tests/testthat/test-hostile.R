# Odd and hostile inputs from issue #17's red team (the single-process
# cases): each fails fast with a classed error, or works, within a hard time
# limit (see helper-timeout.R), so a regression fails instead of hanging.

# -- counts beyond R's integers ----------------------------------------------

test_that("counts beyond R's integers are classed argument errors", {
  expect_error(simulate_devices(3e9), class = "kerasmesh_error_argument")
  expect_error(simulate_devices(5000), class = "kerasmesh_error_argument")
  expect_error(simulate_devices(-1), class = "kerasmesh_error_argument")
  expect_snapshot(simulate_devices(3e9), error = TRUE)
})

test_that("layout_plan(batch_size = 3e9) is refused in R", {
  build <- function() stop("not built")
  lm <- fixture_layout_map()
  err <- expect_error(layout_plan(build, lm, batch_size = 3e9),
                      class = "kerasmesh_error_argument")
  expect_no_match(conditionMessage(err), "-2.14748e+09", fixed = TRUE)
  expect_snapshot(layout_plan(build, lm, batch_size = 3e9), error = TRUE)
})

test_that("the shim refuses batch_size = 3e9 too", {
  skip_if_no_keras()
  within_seconds({
    build <- function() {
      keras()$Sequential(list(keras()$Input(shape = list(4L)),
                              keras()$layers$Dense(8L)))
    }
    # Rather than handing back a number that reticulate 1.28 would wrap.
    expect_error(
      kerasmesh:::shim_call("plan.plan_layout", model = build,
                            distribution = reticulate::r_to_py(book_layout()),
                            batch_size = 3e9),
      class = "kerasmesh_error_argument"
    )
  })
})

test_that("plot(plan, n = 3e9) is a classed argument error", {
  plan <- fixture_plan()
  expect_error(with_png(plot(plan, n = 3e9)),
               class = "kerasmesh_error_argument")
  expect_error(with_png(plot(plan, n = 0)),
               class = "kerasmesh_error_argument")
})

# -- no hangs ----------------------------------------------------------------

test_that("a 400-axis mesh shape whose product is wrong answers fast", {
  skip_if_no_keras()
  out <- in_fresh_r(function() {
    shape <- stats::setNames(c(rep(1, 399), 3), paste0("a", 1:400))
    started <- Sys.time()
    err <- tryCatch(device_mesh(shape), error = function(e) e)
    list(class = class(err), message = conditionMessage(err),
         seconds = as.numeric(Sys.time() - started, units = "secs"))
  })
  expect_true("kerasmesh_error_mesh_shape" %in% out$class)
  expect_match(out$message, "too many to list", fixed = TRUE)
  expect_lt(out$seconds, 10)
})

test_that("catastrophic rule keys are refused, naming the key", {
  skip_if_no_keras()
  within_seconds({
    mesh <- book_mesh()
    err <- expect_error(layout_map(mesh, "(a+)+$" = NA),
                        class = "kerasmesh_error_layout_key")
    expect_match(conditionMessage(err), "(a+)+$", fixed = TRUE)
    lm <- book_layout(mesh)
    expect_error(lm[["(a|a)*b"]] <- "model",
                 class = "kerasmesh_error_layout_key")
    expect_error(lm[["(.*a){12}b"]] <- "model",
                 class = "kerasmesh_error_layout_key")
    expect_snapshot(layout_map(mesh, "(a+)+$" = NA), error = TRUE)
  })
})

test_that("a Keras LayoutMap with a catastrophic key can't hang planning", {
  skip_if_no_keras()
  out <- in_fresh_r(function() {
    keras <- reticulate::import("keras")
    mesh <- device_mesh(c(data = 2, model = 4))
    lm <- keras$distribution$LayoutMap(reticulate::r_to_py(mesh))
    reticulate::py_set_item(lm, "(a+)+$", reticulate::tuple(NULL, "model"))
    build <- function() {
      keras$Sequential(list(keras$Input(shape = list(4L)),
                            keras$layers$Dense(8L, name = strrep("a", 3000))))
    }
    first_class <- function(expr) {
      tryCatch({
        expr
        "none"
      }, error = function(e) class(e)[[1]])
    }
    c(plan = first_class(layout_plan(build, lm)),
      lookup = first_class(kerasmesh:::shim_call(
        "layout.lookup", layout_map = lm,
        path = paste0(strrep("a", 5000), "!"))),
      model_parallel = first_class(with_distribution(
        model_parallel(lm), build())))
  })
  expect_identical(out[["plan"]], "kerasmesh_error_layout_key")
  expect_identical(out[["lookup"]], "kerasmesh_error_layout_key")
  expect_identical(out[["model_parallel"]], "kerasmesh_error_layout_key")
})

# -- the guard ---------------------------------------------------------------

test_that("the guard compares the mesh, not only the device set", {
  skip_if_no_keras()
  within_seconds({
    devices <- list_devices()
    built_on <- data_parallel(device_mesh(c(batch = 8), devices = devices))
    trained_on <- data_parallel(device_mesh(c(batch = 8),
                                            devices = rev(devices)))
    data <- mlp_data(n = 16)
    model <- with_distribution(built_on, build_mlp())
    err <- expect_error(
      with_distribution(trained_on, train_mlp(model, data, epochs = 1L)),
      class = "kerasmesh_error_model_placement"
    )
    expect_match(conditionMessage(err), "another mesh")
    expect_no_match(conditionMessage(err), "incompatible devices")
  })
})

test_that("direct model$fit() errors are classed by with_kerasmesh_errors()", {
  skip_if_no_keras()
  within_seconds({
    data <- mlp_data(n = 16)
    model <- build_mlp()
    set_distribution(data_parallel())
    on.exit(set_distribution(NULL), add = TRUE)
    # Unwrapped, the error is reticulate's own (Rcpp::exception on 1.28,
    # python.builtin.ValueError from 1.29): not a kerasmesh condition.
    raw <- condition_classes(train_mlp(model, data, epochs = 1L))
    expect_true(any(c("Rcpp::exception", "python.builtin.BaseException")
                    %in% raw))
    expect_false("kerasmesh_error" %in% raw)
    err <- expect_error(
      with_kerasmesh_errors(train_mlp(model, data, epochs = 1L)),
      class = "kerasmesh_error_model_placement"
    )
    expect_s3_class(err, "kerasmesh_error")
    expect_error(
      with_kerasmesh_errors(model$predict(data$x, verbose = 0L)),
      class = "kerasmesh_error_model_placement"
    )
  })
})

test_that("with_kerasmesh_errors() also reads reticulate >= 1.29 conditions", {
  skip_if_no_keras()
  # Leave a kerasmesh error in py_last_error(), then signal it the way
  # reticulate >= 1.29 does: a condition of class python.builtin.*.
  model <- build_mlp()
  set_distribution(data_parallel())
  on.exit(set_distribution(NULL), add = TRUE)
  try(model$predict(mlp_data(n = 8)$x, verbose = 0L), silent = TRUE)
  newer <- structure(
    class = c("python.builtin.ValueError", "python.builtin.Exception",
              "python.builtin.BaseException",
              "error", "condition"),
    list(message = "ValueError: The model's variables must live ...",
         call = NULL)
  )
  expect_error(with_kerasmesh_errors(stop(newer)),
               class = "kerasmesh_error_model_placement")
  # R errors pass through untouched.
  expect_error(with_kerasmesh_errors(stop("plain R")), "plain R",
               class = "simpleError")
})

test_that("keras.Model's methods are Keras's own once the scope ends", {
  skip_if_no_keras()
  keras <- keras()
  own <- reticulate::py_id(keras$Model$fit)
  with_distribution(data_parallel(), {
    expect_false(identical(reticulate::py_id(keras$Model$fit), own))
  })
  expect_identical(reticulate::py_id(keras$Model$fit), own)
  f <- function() {
    local_distribution(model_parallel(book_layout()))
    reticulate::py_id(keras$Model$predict)
  }
  own_predict <- reticulate::py_id(keras$Model$predict)
  expect_false(identical(f(), own_predict))
  expect_identical(reticulate::py_id(keras$Model$predict), own_predict)
  set_distribution(data_parallel())
  set_distribution(NULL)
  expect_identical(reticulate::py_id(keras$Model$fit), own)
})

# -- zero-parameter models and picture arguments -----------------------------

test_that("a model without parameters plans and plots as 0 bytes", {
  skip_if_no_keras()
  within_seconds({
    build <- function() {
      keras()$Sequential(list(keras()$Input(shape = list(4L, 2L)),
                              keras()$layers$Flatten()))
    }
    plan <- suppressWarnings(layout_plan(build, book_layout()))
    expect_identical(nrow(plan), 0L)
    expect_identical(summary(plan)$bytes, 0)
    expect_match(format(summary(plan)), "Parameters:  0 (0 B)", fixed = TRUE,
                 all = FALSE)
    expect_identical(with_png(plot(plan)), plan)
    expect_identical(with_png(plot(plan, by = "part", what = "weights")),
                     plan)
  })
})

test_that("bad by or what in plot() are classed argument errors", {
  plan <- fixture_plan()
  expect_error(with_png(plot(plan, by = "layers")),
               class = "kerasmesh_error_argument")
  expect_error(with_png(plot(plan, what = c("total", "weights", "x"))),
               class = "kerasmesh_error_argument")
  expect_error(with_png(plot(plan, what = NA)),
               class = "kerasmesh_error_argument")
  expect_snapshot(with_png(plot(plan, by = "layers")), error = TRUE)
})
