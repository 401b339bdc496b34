# Benchmark: plan a Llama-3-70B-sized keras-hub backbone, from its config,
# on a 4 x 8 mesh of 32 simulated devices, with the backbone's own
# get_layout_map(). Nothing is allocated: 70.6 billion parameters (141 GB
# in bfloat16) would not fit this machine.
#
#   Rscript bench/hub_70b_plan.R
#
# Prints the time of layout_plan() (which builds the backbone shape-only;
# Python, Keras and keras-hub are imported beforehand and timed apart) and
# the R process's peak resident memory (VmHWM). Fails unless the plan
# takes under 10 s and the peak stays under 2 GiB.

source(file.path(dirname(sub("^--file=", "", grep(
  "^--file=", commandArgs(), value = TRUE
))), "common.R"))

simulate_devices(32)
start <- Sys.time()
mesh <- device_mesh(c(batch = 4, model = 8))
hub <- reticulate::import("keras_hub")
startup <- as.numeric(Sys.time() - start, units = "secs")

config <- list(vocabulary_size = 128256L, num_layers = 80L,
               num_query_heads = 64L, hidden_dim = 8192L,
               intermediate_dim = 28672L, num_key_value_heads = 8L,
               dtype = "bfloat16")
build <- function() do.call(hub$models$Llama3Backbone, config)

start <- Sys.time()
lm <- hub$models$Llama3Backbone$get_layout_map(reticulate::r_to_py(mesh))
plan <- layout_plan(build, lm, optimizer = "adam")
elapsed <- as.numeric(Sys.time() - start, units = "secs")
peak <- peak_rss()

print(plan, n = 12, width = 80)
s <- summary(plan)
print(s)
cat("\n")
cat(sprintf("Python, Keras, keras-hub and the mesh started in %.2f s\n",
            startup))
cat(sprintf("layout_plan() took %.2f s (limit 10 s)\n", elapsed))
cat(sprintf("Peak RSS of the R process: %s (%.2f GiB; limit 2 GiB)\n",
            kerasmesh:::bytes_text(peak), peak / 2^30))

cat(sprintf("seconds %.4f\npeak_rss_gib %.4f\nvariables %d\n", elapsed,
            peak / 2^30, nrow(plan)))

ok <- elapsed < 10 && peak < 2 * 2^30 && nrow(plan) == 723 &&
  abs(s$parameters / 70.55e9 - 1) < 1e-3
if (!ok) {
  cat("FAIL\n")
  quit(status = 1)
}
cat("OK\n")
