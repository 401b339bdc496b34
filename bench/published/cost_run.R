# One published run costed as kerasmesh costs it, in a process of its own
# (its simulated devices are the run's): prints "name value" lines.
#   Rscript bench/published/cost_run.R NAME
here <- dirname(normalizePath(sub("^--file=", "", grep(
  "^--file=", commandArgs(), value = TRUE
))))
source(file.path(here, "runs.R"))
name <- commandArgs(trailingOnly = TRUE)[[1]]
run <- published_runs[[name]]
stopifnot(!is.null(run))

library(kerasmesh)
devices <- 8L * run$nodes
simulate_devices(devices)
hub <- reticulate::import("keras_hub")
keras <- reticulate::import("keras")
build <- function() {
  backbone <- do.call(hub$models[[run$model$backbone]],
                      c(run$model$args, num_layers = run$model$blocks,
                        dtype = "mixed_bfloat16"))
  causal <- sub("Backbone$", "CausalLM", run$model$backbone)
  hub$models[[causal]](backbone = backbone, preprocessor = NULL)
}
mesh <- device_mesh(c(data = devices, model = 1))
lm <- do.call(layout_map, c(list(mesh), fsdp_rules()))
topology <- do.call(device_topology, c(list(run$gpu, nodes = run$nodes),
                                       run$figures))
loss <- keras$losses$SparseCategoricalCrossentropy(from_logits = TRUE)
started <- Sys.time()
cost <- layout_cost(build, model_parallel(lm), batch_size = run$batch,
                    optimizer = "adam", loss = loss,
                    input_shapes = list(token_ids = run$sequence,
                                        padding_mask = run$sequence),
                    remat = run$lever, topology = topology, timeout = 1800)
seconds <- as.numeric(difftime(Sys.time(), started, units = "secs"))
rss <- grep("^VmHWM:", readLines("/proc/self/status"), value = TRUE)
time <- cost$time
cat(sprintf("modeled %.6g\n", time$total))
cat(sprintf("memory %.6g\n", cost$need))
cat(sprintf("fits %d\n", as.integer(cost$need <= topology$memory)))
cat(sprintf("matmul %.6g\nattention %.6g\nbound_by_memory %.6g\n",
            time$parts[["matmul"]], time$parts[["attention"]],
            time$parts[["memory"]]))
cat(sprintf("exposed %.6g\nhidden %.6g\n", sum(time$communication$exposed),
            sum(time$communication$hidden)))
cat(sprintf("flops %.6g\n", cost$flops))
cat(sprintf("cost_seconds %.6g\n", seconds))
cat(sprintf("peak_rss %.6g\n", as.numeric(gsub("[^0-9]", "", rss)) * 1024))
cat("compiled_for:", cost$compiled_for$label, "\n")
cat("attention:", cost$attention, "\n")
