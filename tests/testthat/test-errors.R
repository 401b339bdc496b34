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

test_that("a received value's fact is worded in R's terms in its bullet", {
  fact <- list(type = "character", length = 2, values = list("data", "model"))
  desc <- list(kind = "batch_dim_name", message = "`x` must be an axis.",
               bullets = list(list("x", "Received {value}.", fact),
                              list("i", "Axes are {a}.")),
               python_type = "KerasmeshError", traceback = NULL)
  err <- tryCatch(kerasmesh:::abort_from_python(desc, call = NULL),
                  error = identity)
  expect_s3_class(err, c("kerasmesh_error_batch_dim_name", "kerasmesh_error"))
  expect_snapshot(cat(conditionMessage(err)))
})

test_that("each kind of received value has R words", {
  words <- function(...) kerasmesh:::value_words(list(...))
  expect_identical(words(type = "null", length = 0), "NULL")
  expect_identical(words(type = "logical", length = 1, values = list(TRUE)),
                   "`TRUE`")
  expect_identical(words(type = "character", length = 1, values = list("a")),
                   "a string (\"a\")")
  expect_identical(words(type = "numeric", length = 1, values = list(3)),
                   "a number (3)")
  expect_identical(
    words(type = "character", length = 2, values = list(NULL, "model")),
    "a character vector (NA, \"model\")"
  )
  expect_identical(
    words(type = "numeric", length = 7, values = as.list(1:5)),
    "an integer vector (1, 2, 3, 4, 5, ...)"
  )
  expect_identical(
    words(type = "list", length = 2,
          values = list(NULL, list(type = "numeric", length = 2))),
    "a list of 2 values: NULL, <numeric vector of length 2>"
  )
  expect_identical(words(type = "tuple", length = 1, values = list(1)),
                   "a tuple of 1 value: 1")
  expect_identical(
    words(type = "named_list", length = 1, names = list("a"),
          values = list(1)),
    "a named list of 1 value: a = 1"
  )
  expect_identical(words(type = "list", length = 0, values = list()),
                   "an empty list")
  expect_identical(words(type = "object", length = 1, class = "a.B"),
                   "an object of class <a.B>")
})

test_that("no kerasmesh error calls the user's value a Python object", {
  skip_if_no_keras()
  local_shim_export("mesh.resolve_shape", "mesh.device_mesh")
  mesh <- book_mesh()
  dict <- reticulate::dict(a = 1)
  messages <- vapply(list(
    function() layout_map(mesh, k = dict),
    function() layout_map(mesh, k = reticulate::tuple(1, 2)),
    function() layout_map(mesh, k = list(NULL, list(1, 2))),
    function() variable_values(dict),
    function() sharding_picture(mesh, axes = dict, shape = 8),
    function() {
      kerasmesh:::shim_call("distribution.model_parallel",
                            layout_map = layout_map(mesh)$py,
                            batch_dim_name = list("x", "y"))
    },
    function() {
      kerasmesh:::shim_call("devices.list_devices",
                            device_type = list("a", "b"))
    },
    function() {
      kerasmesh:::shim_call("mesh.resolve_shape", shape = list(2, dict),
                            n_devices = 8L, device_type = "cpu")
    }
  ), function(f) {
    err <- tryCatch(f(), kerasmesh_error = identity)
    expect_s3_class(err, "kerasmesh_error")
    conditionMessage(err)
  }, character(1))
  expect_no_match(messages, "Python (list|tuple|dict|str|int|float)")
  expect_no_match(messages, "a Python", fixed = TRUE)
  expect_no_match(messages, "{value}", fixed = TRUE)
  expect_snapshot(writeLines(messages))
})

test_that("braces in Python text are escaped for cli", {
  expect_identical(kerasmesh:::cli_escape("{a}"), "{{a}}")
})
