# Benchmark: a small search on a topology, cold and warm. A five-layer MLP
# as keras3's R API builds it (keras_model_sequential() |> layer_dense()
# ..., written here with reticulate, which keras3 wraps), on one node of
# 8 H100 80 GB, memory 3.5 MB per device (so the levers and the layout
# matter), batch 256, Adam.
#
#   Rscript bench/search_mlp.R [CACHE_DIR]
#
# Without CACHE_DIR the search runs twice on a fresh cache (cold, then
# warm); each prints "name value" lines: seconds, compiles, cache hits,
# the found time, memory and mesh, and this process's peak RSS.
source(file.path(dirname(sub("^--file=", "", grep(
  "^--file=", commandArgs(), value = TRUE
))), "common.R"))

simulate_devices(8)
keras <- reticulate::import("keras")
mlp <- function() {
  dense <- function(units, activation = NULL, name) {
    keras$layers$Dense(as.integer(units), activation = activation,
                       name = name)
  }
  keras$Sequential(list(
    keras$Input(shape = list(784L)),
    dense(512, "relu", "dense"), dense(256, "relu", "dense_1"),
    dense(128, "relu", "dense_2"), dense(64, "relu", "dense_3"),
    dense(10, NULL, "dense_4")
  ), name = "mlp")
}
topo <- device_topology("h100-sxm-80gb")
args <- commandArgs(trailingOnly = TRUE)
cache <- if (length(args)) args[[1]] else tempfile("kerasmesh-cache-")
line <- function(name, value) cat(sprintf("%s %.6g\n", name, value))
for (run in c("cold", "warm")) {
  started <- Sys.time()
  found <- search_layout(mlp, topo, batch_size = 256, optimizer = "adam",
                         loss = "sparse_categorical_crossentropy",
                         memory = "3.5MB", cache = cache)
  seconds <- as.numeric(Sys.time() - started, units = "secs")
  if (run == "cold") print(found)
  line(paste0(run, "_seconds"), seconds)
  line(paste0(run, "_compiles"), found$compiles)
  line(paste0(run, "_cache_hits"), found$cache$hits)
  line(paste0(run, "_time_s"), found$time$total)
  line(paste0(run, "_memory_mb"), found$cost$need / 1e6)
  cat(sprintf("%s_config %s k=%d remat=%s\n", run,
              paste(mesh_shape(found$mesh), collapse = "x"),
              found$accumulation_steps, paste(found$remat, collapse = ",")))
}
line("peak_rss_gib", peak_rss() / 2^30)
