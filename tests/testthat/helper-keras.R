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

# keras3's shape() for R values, mirrored from keras3's R/shape.R (keras3
# is not installable here): a list of integers, NULL for an unknown size
# (given as NULL, NA or -1), of class "keras_shape".
keras3_shape <- function(...) {
  fix <- function(x) {
    if (is.null(x) || identical(x, NA_integer_) || identical(x, NA_real_) ||
        identical(x, NA) ||
        (is.numeric(x) && isTRUE(suppressWarnings(x == -1L)))) {
      NA_integer_
    } else if (!is.atomic(x) || length(x) > 1) {
      lapply(x, fix)
    } else {
      as.integer(x)
    }
  }
  shp <- unlist(lapply(list(...), fix), use.names = FALSE)
  shp <- lapply(shp, function(x) if (identical(x, NA_integer_)) NULL else x)
  class(shp) <- "keras_shape"
  shp
}
