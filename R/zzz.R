.onLoad <- function(libname, pkgname) {
  if (!nzchar(Sys.getenv("KERAS_BACKEND"))) {
    Sys.setenv(KERAS_BACKEND = "jax")
  }
  register_s3_method("reticulate", "r_to_py", "kerasmesh_object")
  register_repr_methods()
  the$empty_trace <- empty_trace()
}
