# Objects built from the shim's saved plain-value descriptions
# (fixtures/*.rds, written by fixtures/make-fixtures.R), for tests of
# pure-R code (format, print, plot) that run without Python. Their `py`
# field is NULL.
fixture <- function(name) {
  readRDS(testthat::test_path("fixtures", paste0(name, ".rds")))
}

fixture_mesh <- function(name = "mesh-2x4") {
  kerasmesh:::new_device_mesh(fixture(name))
}

fixture_layout_map <- function() {
  kerasmesh:::new_layout_map(fixture("layout-map-book"))
}

fixture_plan <- function() {
  kerasmesh:::new_layout_plan(fixture("plan-book"))
}

fixture_picture <- function(name = "picture-book-kernel") {
  kerasmesh:::new_sharding_picture(fixture(name))
}
