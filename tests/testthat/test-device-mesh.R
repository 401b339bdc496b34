test_that("device_mesh() builds the book's 2 x 4 mesh from a named shape", {
  skip_if_no_keras()
  mesh <- book_mesh()
  expect_s3_class(mesh, "kerasmesh_device_mesh")
  expect_identical(mesh_shape(mesh), c(data = 2L, model = 4L))
  expect_identical(mesh_axis_names(mesh), c("data", "model"))
  expect_identical(dim(mesh_devices(mesh)), c(2L, 4L))
  expect_identical(mesh_devices(mesh)["1", "2"], "cpu:6")
  expect_identical(names(dimnames(mesh_devices(mesh))), c("data", "model"))
})

test_that("device_mesh() accepts doubles, axis_names and a keras3 shape", {
  skip_if_no_keras()
  expect_identical(
    mesh_shape(device_mesh(c(4, 2), axis_names = c("a", "b"))),
    c(a = 4L, b = 2L)
  )
  keras_shape <- structure(list(2L, 4L), class = "keras_shape")
  expect_identical(
    mesh_shape(device_mesh(keras_shape, c("data", "model"))),
    c(data = 2L, model = 4L)
  )
})

test_that("one size given as NA or -1 is inferred from the device count", {
  skip_if_no_keras()
  expect_identical(mesh_shape(device_mesh(c(data = 2, model = NA))),
                   c(data = 2L, model = 4L))
  expect_identical(mesh_shape(device_mesh(c(data = -1, model = 2))),
                   c(data = 4L, model = 2L))
  unknown <- structure(list(NULL, 2L), class = "keras_shape")
  expect_identical(mesh_shape(device_mesh(unknown, c("a", "b"))),
                   c(a = 4L, b = 2L))
})

test_that("devices can be a count or device names", {
  skip_if_no_keras()
  four <- device_mesh(c(data = 2, model = 2), devices = 4)
  expect_identical(as.vector(t(mesh_devices(four))), paste0("cpu:", 0:3))
  named <- device_mesh(c(model = 2), devices = c("cpu:7", "cpu:3"))
  expect_identical(as.vector(mesh_devices(named)), c("cpu:7", "cpu:3"))
})

test_that("a mesh prints its shape, axis names and labelled device grid", {
  skip_if_no_keras()
  expect_snapshot(print(book_mesh()))
  expect_snapshot(print(device_mesh(c(batch = 8))))
  expect_snapshot(print(device_mesh(c(a = 2, b = 2, c = 2))))
})

test_that("format() returns lines within 80 columns", {
  skip_if_no_keras()
  lines <- format(device_mesh(c(batch = 8)))
  expect_type(lines, "character")
  expect_true(all(nchar(lines) <= 80))
})

test_that("r_to_py() gives the Keras DeviceMesh, usable by Keras", {
  skip_if_no_keras()
  mesh <- book_mesh()
  py <- reticulate::r_to_py(mesh)
  expect_s3_class(py, "keras.src.distribution.distribution_lib.DeviceMesh")
  lm <- keras()$distribution$LayoutMap(mesh)
  expect_identical(
    lm$device_mesh$axis_names,
    c("data", "model")
  )
})

test_that("bad meshes give classed errors that name the problem", {
  skip_if_no_keras()
  expect_snapshot(error = TRUE, {
    device_mesh(c(3, 4), axis_names = c("data", "model"))
    device_mesh(c(2, 4), axis_names = c("data", "data"))
    device_mesh(c(0, 8), axis_names = c("data", "model"))
    device_mesh(c(2.5, 3.2), axis_names = c("data", "model"))
    device_mesh(c(NA, NA), axis_names = c("data", "model"))
    device_mesh(c(2, 4), axis_names = "data")
    device_mesh(c(2, 4), axis_names = c("data", ""))
    device_mesh(c(data = 1), devices = "cpu:99")
    device_mesh(c(data = 2), devices = c("cpu:1", "cpu:1"))
    device_mesh(c(data = 3, model = NA))
    device_mesh(c(2, 4))
    device_mesh("big")
  })
})

test_that("each bad mesh has its own error class", {
  skip_if_no_keras()
  expect_error(device_mesh(c(3, 4), c("data", "model")),
               class = "kerasmesh_error_mesh_shape")
  expect_error(device_mesh(c(2, 4), c("data", "data")),
               class = "kerasmesh_error_axis_names")
  expect_error(device_mesh(c(0, 8), c("data", "model")),
               class = "kerasmesh_error_mesh_shape")
  expect_error(device_mesh(c(2.5, 3.2), c("data", "model")),
               class = "kerasmesh_error_mesh_shape")
  expect_error(device_mesh(c(NA, NA), c("data", "model")),
               class = "kerasmesh_error_mesh_shape")
  expect_error(device_mesh(c(2, 4), "data"),
               class = "kerasmesh_error_axis_names")
  expect_error(device_mesh(c(2, 4), c("data", "")),
               class = "kerasmesh_error_axis_names")
  expect_error(device_mesh(c(data = 1), devices = "cpu:99"),
               class = "kerasmesh_error_devices")
  expect_error(device_mesh(c(data = 2), devices = c("cpu:1", "cpu:1")),
               class = "kerasmesh_error_devices")
  expect_error(device_mesh(c(data = 2), devices = 9),
               class = "kerasmesh_error_devices")
  # The session is still usable.
  expect_s3_class(book_mesh(), "kerasmesh_device_mesh")
})

test_that("the error for a wrong product lists the valid shapes", {
  skip_if_no_keras()
  err <- expect_error(device_mesh(c(3, 4), c("data", "model")),
                      class = "kerasmesh_error")
  message <- conditionMessage(err)
  expect_match(message, "needs 12 devices")
  expect_match(message, "8 cpu devices")
  expect_match(message, "8 devices can form 1.8, 2.4, 4.2 or 8.1")
})

test_that("a mesh prints from its description alone, without Python", {
  for (name in c("mesh-2x4", "mesh-3d")) {
    mesh <- fixture_mesh(name)
    lines <- format(mesh)
    expect_true(all(nchar(lines) <= 80), label = name)
  }
  expect_snapshot(print(fixture_mesh()))
  expect_snapshot(print(fixture_mesh("mesh-3d")))
})

test_that("meshes of one to four axes print from their descriptions", {
  expect_snapshot({
    print(fixture_mesh("mesh-1d"))
    print(fixture_mesh("mesh-4d"))
    print(fixture_mesh("mesh-4-devices"))
  })
})

test_that("mesh accessors read the description, without Python", {
  mesh <- fixture_mesh()
  expect_identical(mesh_shape(mesh), c(data = 2L, model = 4L))
  expect_identical(mesh_axis_names(mesh), c("data", "model"))
  expect_identical(dim(mesh_devices(mesh)), c(2L, 4L))
  expect_identical(mesh_devices(mesh)["1", "2"], "cpu:6")
  expect_identical(names(dimnames(mesh_devices(mesh))), c("data", "model"))
  # Devices in the order given, row-major like Python's.
  four <- fixture_mesh("mesh-4-devices")
  expect_identical(as.vector(t(mesh_devices(four))),
                   c("cpu:7", "cpu:5", "cpu:3", "cpu:1"))
  expect_identical(dim(mesh_devices(fixture_mesh("mesh-4d"))),
                   c(2L, 1L, 2L, 2L))
  expect_identical(mesh_shape(fixture_mesh("mesh-1d")), c(batch = 8L))
})

test_that("mesh accessors refuse what is not a mesh, in R", {
  expect_error(mesh_shape(c(data = 2, model = 4)),
               class = "kerasmesh_error_device_mesh")
  expect_error(mesh_axis_names("mesh"), class = "kerasmesh_error_device_mesh")
  expect_error(mesh_devices(NULL), class = "kerasmesh_error_device_mesh")
  expect_snapshot(error = TRUE, mesh_shape(list(shape = c(a = 2))))
})

test_that("device_mesh() refuses wrong R types before Python", {
  expect_error(device_mesh("big"), class = "kerasmesh_error_mesh_shape")
  expect_error(device_mesh(numeric()), class = "kerasmesh_error_mesh_shape")
  expect_error(device_mesh(list(2, 4)), class = "kerasmesh_error_mesh_shape")
  expect_error(device_mesh(c(2, 4), axis_names = 1:2),
               class = "kerasmesh_error_axis_names")
  expect_error(device_mesh(c(data = 2), devices = list("cpu:0")),
               class = "kerasmesh_error_devices")
  expect_error(device_mesh(c(data = 2), devices = c("cpu:0", NA)),
               class = "kerasmesh_error_devices")
  expect_error(device_mesh(c(data = 2), devices = character()),
               class = "kerasmesh_error_devices")
  expect_snapshot(error = TRUE, {
    device_mesh(TRUE)
    device_mesh(c(2, 4), axis_names = factor(c("a", "b")))
    device_mesh(c(data = 2), devices = c(1, 2))
  })
})

test_that("device_mesh() sends sizes, names and devices as plain values", {
  sent <- shim_request("device_mesh", c(data = 2, model = NA))
  expect_identical(sent$name, "mesh.device_mesh")
  expect_identical(sent$args, list(shape = list(2, NULL),
                                   axis_names = list("data", "model"),
                                   devices = NULL))
  # A keras3 shape: NULL is an unknown size; names come separately.
  sent <- shim_request("device_mesh", keras3_shape(NULL, 4L),
                       axis_names = c("a", "b"))
  expect_identical(sent$args[[1]], list(NULL, 4L))
  expect_identical(sent$args[[2]], list("a", "b"))
  # All-NA logicals are sizes; an NA name is None.
  sent <- shim_request("device_mesh", c(NA, NA), axis_names = c("a", NA))
  expect_identical(sent$args[[1]], list(NULL, NULL))
  expect_identical(sent$args[[2]], list("a", NULL))
  # Devices: a count as it is, names as a list.
  expect_identical(shim_request("device_mesh", c(x = 4), devices = 4)$args[[3]],
                   4)
  sent <- shim_request("device_mesh", c(x = 2), devices = c("cpu:1", "cpu:0"))
  expect_identical(sent$args[[3]], list("cpu:1", "cpu:0"))
  expect_null(shim_request("device_mesh", c(2, 4))$args[[2]])
})

test_that("a device name that is NA is named by its place", {
  expect_error(kerasmesh:::check_devices(c("cpu:0", NA)), "Element 2 is NA",
               class = "kerasmesh_error_devices")
})

test_that("NaN is no size to infer", {
  expect_error(kerasmesh:::check_mesh_shape(c(data = NaN, model = 8)),
               "Dimension 1 is NaN", class = "kerasmesh_error_mesh_shape")
})

test_that("axis names given in the shape and in axis_names must agree", {
  expect_error(device_mesh(c(data = 2, model = 4), axis_names = c("x", "y")),
               "given once", class = "kerasmesh_error_axis_names")
  skip_if_no_keras()
  mesh <- device_mesh(c(data = 2, model = 4),
                      axis_names = c("data", "model"))
  expect_identical(mesh_axis_names(mesh), c("data", "model"))
})
