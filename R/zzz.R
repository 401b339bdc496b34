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

# Registers a method for another package's generic once that package is
# loaded, without loading it now.
register_s3_method <- function(package, generic, class,
                               method = get(paste0(generic, ".", class),
                                            envir = topenv())) {
  force(generic)
  force(class)
  force(method)
  on_package_load(package, function() {
    registerS3method(generic, class, method, envir = asNamespace(package))
  })
}

# Runs `fn()` now if `package` is loaded, and whenever it loads.
on_package_load <- function(package, fn) {
  if (isNamespaceLoaded(package)) {
    fn()
  }
  setHook(packageEvent(package, "onLoad"), function(...) fn())
}
