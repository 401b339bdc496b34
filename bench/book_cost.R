# Benchmark: cost one training step of the book's model on the 2 x 4 mesh
# without allocating it, and compare data with model parallelism.
#
# Input 16000 -> Dense 64000 relu -> Dense 8000 sigmoid: 1,536,072,000
# parameters, 6.1 GB in float32. layout_cost() builds the model
# shape-only, builds Adam shape-only, and has XLA compile one training step
# (batch 64, binary cross-entropy) on abstract arrays; nothing of the
# model's size is allocated. Keras itself would allocate the model (6.1
# GB), Adam's slots (12.3 GB) and the gradients before its first step.
#
# Run from the repository root, in a fresh R process:
#
#   Rscript bench/book_cost.R
#
# Prints the wall time of layout_cost() (the first call, which also builds
# the model; Python and Keras are started beforehand and timed apart), the
# R process's peak resident memory (VmHWM, including the embedded Python),
# and the data-parallel versus model-parallel comparison. Fails unless the
# cost takes under 10 s and the peak stays under 1.5 GiB.

source(file.path(dirname(sub("^--file=", "", grep(
  "^--file=", commandArgs(), value = TRUE
))), "common.R"))

setup <- book_setup()
mp <- model_parallel(setup$lm)

start <- Sys.time()
cost <- layout_cost(setup$book, mp, batch_size = 64, optimizer = "adam",
                    loss = "binary_crossentropy")
elapsed <- as.numeric(Sys.time() - start, units = "secs")
peak <- peak_rss()
print(cost, memory = "80GB")

cmp <- compare_layouts(
  setup$book, list(data_parallel = data_parallel(), model_parallel = mp),
  batch_size = 64, optimizer = "adam", loss = "binary_crossentropy",
  memory = "80GB"
)
cat("\n")
print(cmp)
peak_all <- peak_rss()

cat("\n")
cat(sprintf("Python, Keras and the mesh started in %.2f s\n", setup$startup))
cat(sprintf("layout_cost() took %.2f s (limit 10 s), XLA's compile %.2f s\n",
            elapsed, cost$compile_seconds))
cat(sprintf("Peak RSS after layout_cost(): %s (%.2f GiB; limit 1.5 GiB)\n",
            kerasmesh:::bytes_text(peak), peak / 2^30))
cat(sprintf("Peak RSS after the comparison too: %s\n", kerasmesh:::bytes_text(peak_all)))
dp_traffic <- cmp$traffic[cmp$layout == "data_parallel"]
mp_traffic <- cmp$traffic[cmp$layout == "model_parallel"]
cat(sprintf("Traffic per device per step: data parallel %s, model parallel %s (ratio %.2f)\n",
            kerasmesh:::bytes_text(dp_traffic), kerasmesh:::bytes_text(mp_traffic),
            dp_traffic / mp_traffic))

# Machine-readable lines for bench/run.R.
cat(sprintf("seconds %.4f\npeak_rss_gib %.4f\n", elapsed, peak / 2^30))
cat(sprintf("dp_total_gb %.4f\nmp_total_gb %.4f\n",
            cmp$total[1] / 1e9, cmp$total[2] / 1e9))
cat(sprintf("dp_traffic_gb %.4f\nmp_traffic_gb %.4f\n",
            dp_traffic / 1e9, mp_traffic / 1e9))

s <- cost$plan
ok <- elapsed < 10 && peak < 1.5 * 2^30 && s$parameters == 1536072000 &&
  cost$memory[["weights"]] == s$bytes / 4
if (!ok) {
  cat("FAIL\n")
  quit(status = 1)
}
cat("OK\n")
