# Tests that need Python skip cleanly without it, except under `make check`
# (KERASMESH_REQUIRE_PYTHON=true), where a missing Python is a failure.
skip_if_no_keras <- function() {
  if (kerasmesh::keras_available()) {
    kerasmesh::simulate_devices(8)
    return(invisible(TRUE))
  }
  if (identical(Sys.getenv("KERASMESH_REQUIRE_PYTHON"), "true")) {
    stop("Python with keras and jax is required but was not found.")
  }
  testthat::skip("Python with keras and jax is not available.")
}

keras <- function() {
  reticulate::import("keras")
}

# The book's 2 x 4 mesh.
book_mesh <- function() {
  kerasmesh::device_mesh(c(data = 2, model = 4))
}
