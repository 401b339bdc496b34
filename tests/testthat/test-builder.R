# with_plan_model(): the `model` argument of layout_plan() and layout_cost().
# Pure R: a fake Python object stands in for a Keras model.

test_that("a Keras model goes to the shim call as it is", {
  model <- structure(list(), class = c("keras.src.models.Model",
                                       "python.builtin.object"))
  got <- NULL
  out <- kerasmesh:::with_plan_model(model, function(m) {
    got <<- m
    "planned"
  })
  expect_identical(out, "planned")
  expect_identical(got, model)
})

test_that("an R function goes down as a builder that calls it", {
  calls <- 0
  build <- function() {
    calls <<- calls + 1
    "a model"
  }
  out <- kerasmesh:::with_plan_model(build, function(builder) {
    expect_true(is.function(builder))
    expect_false(identical(builder, build))
    builder()
  })
  expect_identical(out, "a model")
  expect_identical(calls, 1)
})

test_that("a builder's own error reaches the caller, not the wrapped one", {
  build <- function() stop("no such layer: Densse")
  # The shim (here, R standing in for it) turns the error into its own.
  shim <- function(builder) {
    tryCatch(builder(), error = function(e) stop("Python raised RError"))
  }
  expect_error(kerasmesh:::with_plan_model(build, shim),
               "no such layer: Densse")
})

test_that("an error Keras raises in a builder is classed, Keras's its parent", {
  skip_if_no_keras()
  lm <- layout_map(book_mesh(), ".*kernel" = c(NA, "model"))
  err <- expect_error(
    layout_plan(function() keras()$layers$Dense(-1L), lm),
    "`model` failed to build the model", class = "kerasmesh_error_model"
  )
  expect_match(conditionMessage(err), "units", fixed = TRUE)
  expect_false(is.null(err$parent))
})

test_that("errors of the shim call itself pass through", {
  shim <- function(builder) stop("shape mismatch")
  expect_error(kerasmesh:::with_plan_model(function() "m", shim),
               "shape mismatch")
})

test_that("anything else is a classed error naming the argument", {
  wrapper <- function(model) {
    kerasmesh:::with_plan_model(model, function(m) m)
  }
  expect_error(wrapper("sequential"), class = "kerasmesh_error_model")
  err <- tryCatch(wrapper(42), error = identity)
  expect_s3_class(err, "kerasmesh_error")
  expect_match(conditionMessage(err), "`model` must be a Keras model or a",
               fixed = TRUE)
  expect_match(conditionMessage(err), "Received a number", fixed = TRUE)
  expect_identical(conditionCall(err), quote(wrapper(42)))
})

test_that("an interrupt in the builder stays an interrupt", {
  # Reticulate hands an interrupt in an R function Python called back to
  # Python as a RuntimeError ("Unknown exception occurred"); the shim (R
  # standing in for it) then raises its own error.
  shim <- function(builder) {
    tryCatch(builder(), interrupt = function(i) {
      stop("Python raised <RuntimeError>: Unknown exception occurred")
    })
  }
  got <- tryCatch(
    kerasmesh:::with_plan_model(function() rlang::interrupt(), shim),
    interrupt = function(i) "interrupted", error = conditionMessage
  )
  expect_identical(got, "interrupted")
  # An interrupt the builder handles itself is no interrupt of the call.
  handled <- function() tryCatch(rlang::interrupt(), interrupt = identity)
  expect_error(
    kerasmesh:::with_plan_model(handled, function(b) {
      b()
      stop("shape mismatch")
    }),
    "shape mismatch"
  )
})

test_that("a builder must be callable as kerasmesh calls it", {
  run <- function(model, blocks = FALSE) {
    kerasmesh:::with_plan_model(model, function(builder) "ran",
                                blocks = blocks)
  }
  err <- expect_error(run(function(x) x), class = "kerasmesh_error_model")
  expect_match(conditionMessage(err), "no arguments", fixed = TRUE)
  expect_match(conditionMessage(err), "argument `x` has no default",
               fixed = TRUE)
  expect_error(run(function(x, y) x), "`x` and `y` have no default",
               class = "kerasmesh_error_model")
  # Defaults, dots and primitives can be called with nothing.
  expect_identical(run(function(x = 1, ...) x), "ran")
  expect_identical(run(function(...) 1), "ran")
  # With blocks: one argument, or dots.
  expect_identical(run(function(n) n, blocks = TRUE), "ran")
  expect_identical(run(function(n, width = 2) n, blocks = TRUE), "ran")
  expect_identical(run(function(...) 1, blocks = TRUE), "ran")
  for (model in list(function() 1, function(a, b) a)) {
    expect_error(run(model, blocks = TRUE), "function of one argument",
                 class = "kerasmesh_error_model")
  }
})

test_that("a builder's timeout is worded as the shim words its own", {
  skip_if_no_keras()
  kerasmesh:::shim()
  deadline <- reticulate::import("kerasmesh.cost.deadline")
  for (task in c("cost", "search")) {
    words <- deadline[[c(cost = "COSTING", search = "SEARCHING")[[task]]]]
    e <- kerasmesh:::builder_timeout(5, task, simpleError("stopped"), NULL)
    message <- cli::ansi_strip(conditionMessage(e))
    expect_match(message, paste(words[[1]], "took longer than 5 s."),
                 fixed = TRUE)
    expect_match(message, words[[2]], fixed = TRUE)
  }
})
