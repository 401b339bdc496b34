# kerasmesh: the same model-parallel training as throughput.py, driven from R.
# Prints one line per repetition: "steps_per_second <value>".
# Usage: Rscript throughput.R REPS
library(kerasmesh)
simulate_devices(8)
args <- commandArgs(trailingOnly = TRUE)
reps <- if (length(args)) as.integer(args[[1]]) else 3L
bench_dir <- dirname(normalizePath(sub("^--file=", "", grep(
  "^--file=", commandArgs(), value = TRUE
))))
config <- reticulate::import_from_path("throughput_config", path = bench_dir)
keras <- reticulate::import("keras")

mesh <- device_mesh(c(data = 2, model = 4))
lm <- layout_map(mesh, ".*dense.*kernel" = c(NA, "model"),
                 ".*dense.*bias" = "model")
set_distribution(model_parallel(lm, batch_dim_name = "data"))
keras$utils$set_random_seed(1L)
model <- keras$Sequential(list(
  keras$Input(shape = list(config$INPUTS)),
  keras$layers$Dense(config$HIDDEN, activation = "relu"),
  keras$layers$Dense(config$HIDDEN, activation = "relu"),
  keras$layers$Dense(config$OUTPUTS)
))
model$compile(optimizer = "adam", loss = "mse")
n <- config$BATCH * config$EPOCH_STEPS
set.seed(1)
x <- numpy_array(matrix(rnorm(n * config$INPUTS), n))
y <- numpy_array(matrix(rnorm(n * config$OUTPUTS), n))
fit_epoch <- function() {
  model$fit(x, y, batch_size = config$BATCH, epochs = 1L, verbose = 0L)
}
invisible(fit_epoch()) # compile
for (i in seq_len(reps)) {
  elapsed <- system.time(fit_epoch())[["elapsed"]]
  cat("steps_per_second", config$EPOCH_STEPS / elapsed, "\n")
}
