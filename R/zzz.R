.onLoad <- function(libname, pkgname) {
  if (!nzchar(Sys.getenv("KERAS_BACKEND"))) {
    Sys.setenv(KERAS_BACKEND = "jax")
  }
}
