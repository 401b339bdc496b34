# What the R benchmark scripts share: loading kerasmesh, the process's peak
# memory, and the book's model. Sourced by book_plan.R, book_cost.R and
# hub_70b_plan.R.

if (file.exists("DESCRIPTION") && requireNamespace("pkgload", quietly = TRUE)) {
  pkgload::load_all(".", quiet = TRUE)
} else {
  library(kerasmesh)
}

# Peak resident memory of this process (VmHWM), in bytes; it includes the
# embedded Python.
peak_rss <- function() {
  line <- grep("^VmHWM:", readLines("/proc/self/status"), value = TRUE)
  as.numeric(gsub("[^0-9]", "", line)) * 1024
}

# 8 simulated devices and the book's 2 x 4 mesh, with Keras imported; the
# seconds that took are kept apart from what the benchmark times. Also the
# book's model builder and layout map.
book_setup <- function() {
  simulate_devices(8)
  start <- Sys.time()
  mesh <- device_mesh(c(data = 2, model = 4))
  keras <- reticulate::import("keras")
  list(mesh = mesh, keras = keras,
       startup = as.numeric(Sys.time() - start, units = "secs"),
       book = book_model(keras), lm = book_layout(mesh))
}

# The book's model: input 16000 -> Dense 64000 relu -> Dense 8000 sigmoid.
book_model <- function(keras) {
  function() {
    inputs <- keras$Input(shape = list(16000L))
    hidden <- keras$layers$Dense(64000L, activation = "relu")(inputs)
    outputs <- keras$layers$Dense(8000L, activation = "sigmoid")(hidden)
    keras$Model(inputs, outputs)
  }
}

# Kernels and biases split over "model", as in the book.
book_layout <- function(mesh) {
  layout_map(mesh, ".*dense.*kernel" = c(NA, "model"),
             ".*dense.*bias" = "model")
}
