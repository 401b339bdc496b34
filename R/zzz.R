.onLoad <- function(libname, pkgname) {
  # Loading changes no environment variable and starts no Python: the
  # backend is chosen, or checked, when kerasmesh first needs Keras
  # (backend.R), and the requirements are declared when reticulate loads.
  register_s3_method("reticulate", "r_to_py", "kerasmesh_object")
  register_s3_method("reticulate", "r_to_py", "kerasmesh_layout_map")
  register_repr_methods()
  on_package_load("reticulate", declare_python_requirements)
  the$empty_trace <- empty_trace()
}

.onUnload <- function(libpath) {
  end_python_session()
}
