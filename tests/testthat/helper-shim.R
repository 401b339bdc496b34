# Shim functions that only tests call. R reaches nothing outside the
# shim's api/ layer, and api/ exports only what kerasmesh calls; a test
# that calls a topic's function through shim_call() (for the envelope and
# the R conditions) adds it to an api module for its own duration:
# `local_shim_export("arrays.as_lists", "arrays.values")` makes
# shim_call("arrays.as_lists", ...) call kerasmesh.arrays.values.as_lists.
local_shim_export <- function(name, from, env = parent.frame()) {
  kerasmesh:::shim()
  parts <- strsplit(name, ".", fixed = TRUE)[[1]]
  api <- reticulate::import(paste0("kerasmesh.api.", parts[[1]]),
                            convert = FALSE)
  topic <- reticulate::import(paste0("kerasmesh.", from), convert = FALSE)
  exports <- reticulate::py_to_r(reticulate::py_get_attr(api, "__all__"))
  reticulate::py_set_attr(api, parts[[2]],
                          reticulate::py_get_attr(topic, parts[[2]]))
  reticulate::py_set_attr(api, "__all__",
                          reticulate::r_to_py(as.list(c(exports, parts[[2]]))))
  withr::defer({
    reticulate::py_set_attr(api, "__all__",
                            reticulate::r_to_py(as.list(exports)))
    reticulate::import_builtins()$delattr(api, parts[[2]])
  }, envir = env)
  invisible()
}
