# Conditions are built in R: no Python needed.

test_that("kerasmesh_abort() gives the kind's class and the umbrella", {
  err <- tryCatch(kerasmesh:::kerasmesh_abort("{.arg x} must be 1.",
                                              kind = "argument"),
                  error = identity)
  expect_s3_class(err, c("kerasmesh_error_argument", "kerasmesh_error",
                         "rlang_error"))
  expect_match(conditionMessage(err), "must be 1")
})

test_that("kerasmesh_warn() gives the kind's class and the umbrella", {
  w <- tryCatch(kerasmesh:::kerasmesh_warn("Careful.", kind = "replicated"),
                warning = identity)
  expect_s3_class(w, c("kerasmesh_warning_replicated", "kerasmesh_warning"))
})

test_that("a shim error description becomes a classed error with its facts", {
  desc <- list(kind = "mesh_shape", message = "`shape` must fit {8} devices.",
               bullets = list(list("x", "Received 3."),
                              list("i", "8 devices can form 2x4.")),
               python_type = "KerasmeshError", traceback = "tb")
  err <- tryCatch(kerasmesh:::abort_from_python(desc, call = NULL),
                  error = identity)
  expect_s3_class(err, c("kerasmesh_error_mesh_shape", "kerasmesh_error"))
  expect_identical(err$python_type, "KerasmeshError")
  expect_identical(err$python_message, "`shape` must fit {8} devices.")
  expect_identical(err$python_traceback, "tb")
  expect_snapshot(cat(conditionMessage(err)))
})

test_that("any other Python error is kerasmesh_error_python with its type", {
  desc <- list(kind = "python", message = "boom", bullets = list(),
               python_type = "RuntimeError", traceback = NULL)
  err <- tryCatch(kerasmesh:::abort_from_python(desc, call = NULL),
                  error = identity)
  expect_s3_class(err, c("kerasmesh_error_python", "kerasmesh_error"))
  expect_match(conditionMessage(err), "RuntimeError")
})

test_that("a shim warning description becomes a classed warning", {
  expect_warning(
    kerasmesh:::warn_from_python(list("array_precision", "Values {lose}.",
                                      list(list("i", "Use float64.")))),
    class = "kerasmesh_warning_array_precision"
  )
})

test_that("braces in Python text are escaped for cli", {
  expect_identical(kerasmesh:::cli_escape("{a}"), "{{a}}")
})
