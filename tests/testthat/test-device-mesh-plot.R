test_that("plot() draws a 2 x 4 mesh and returns it invisibly", {
  skip_if_no_keras()
  mesh <- book_mesh()
  expect_invisible(with_png(plot(mesh)))
  expect_identical(with_png(plot(mesh, main = "The book's mesh")), mesh)
})

test_that("plot() draws 1-D and 3-D meshes", {
  skip_if_no_keras()
  expect_invisible(with_png(plot(device_mesh(c(batch = 8)))))
  mesh <- device_mesh(c(stage = 2, data = 2, model = 2))
  expect_identical(with_png(plot(mesh)), mesh)
  expect_invisible(with_png(plot(device_mesh(c(a = 2, b = 1, c = 2, d = 2)))))
})

test_that("mesh panels are 2-D slices along the axes after the second", {
  skip_if_no_keras()
  panels <- mesh_panels(mesh_devices(device_mesh(c(a = 2, b = 2, c = 2))))
  expect_length(panels, 2)
  expect_identical(panels[[1]]$label, "c = 0")
  expect_identical(panels[[2]]$devices,
                   matrix(c("cpu:1", "cpu:5", "cpu:3", "cpu:7"), 2))
})

test_that("meshes plot from their descriptions alone, without Python", {
  for (name in c("mesh-2x4", "mesh-3d")) {
    expect_plot_returns(fixture_mesh(name))
  }
})

test_that("mesh panels of a 3-D description are 2-D slices", {
  panels <- mesh_panels(mesh_devices(fixture_mesh("mesh-3d")))
  expect_length(panels, 2)
  expect_identical(panels[[1]]$label, "model = 0")
  expect_identical(dim(panels[[2]]$devices), c(2L, 2L))
  expect_length(mesh_panels(mesh_devices(fixture_mesh("mesh-4d"))), 4)
  expect_length(mesh_panels(mesh_devices(fixture_mesh("mesh-1d"))), 1)
})

test_that("a 2-D mesh draws as a labelled device grid", {
  expect_picture("mesh 2x4", function() plot(fixture_mesh()))
})

test_that("a 3-D mesh draws one panel per index of its last axis", {
  expect_picture("mesh 3d", function() {
    plot(fixture_mesh("mesh-3d"), main = "Three axes")
  })
})

test_that("1-D and 4-D meshes draw", {
  expect_picture("mesh 1d", function() plot(fixture_mesh("mesh-1d")))
  expect_picture("mesh 4d", function() plot(fixture_mesh("mesh-4d")))
})
