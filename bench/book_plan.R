# Benchmark: plan the book's model on the 2 x 4 mesh without allocating it.
#
# Input 16000 -> Dense 64000 relu -> Dense 8000 sigmoid: 1,536,072,000
# parameters, 6.1 GB in float32. With kernels and biases split over "model"
# (4 ways), each device holds a quarter of the weights. Allocating the model
# under ModelParallel on 8 simulated CPU devices takes over 24 GB;
# layout_plan() builds it shape-only.
#
# Run from the repository root, in a fresh R process:
#
#   Rscript bench/book_plan.R
#
# Prints the wall time of layout_plan() (the first call, which also builds
# the model; Python and Keras are started beforehand and timed apart) and
# the R process's peak resident memory (VmHWM), which includes the embedded
# Python. Fails unless the plan takes under 5 s and the peak stays under
# 1.5 GiB.

source(file.path(dirname(sub("^--file=", "", grep(
  "^--file=", commandArgs(), value = TRUE
))), "common.R"))

setup <- book_setup()

start <- Sys.time()
plan <- layout_plan(setup$book, setup$lm, batch_size = 64, optimizer = "adam")
elapsed <- as.numeric(Sys.time() - start, units = "secs")
peak <- peak_rss()

print(plan)
s <- summary(plan)
cat("\n")
cat(sprintf("Python, Keras and the mesh started in %.2f s\n", setup$startup))
cat(sprintf("layout_plan() took %.2f s (limit 5 s)\n", elapsed))
cat(sprintf("Peak RSS of the R process: %s (%.2f GiB; limit 1.5 GiB)\n",
            kerasmesh:::bytes_text(peak), peak / 2^30))
cat(sprintf("Parameters: %s; per-device weights %s of %s (%.4f)\n",
            format(s$parameters, big.mark = ",", scientific = FALSE),
            kerasmesh:::bytes_text(s$device_weights), kerasmesh:::bytes_text(s$bytes),
            s$device_weights / s$bytes))

# Machine-readable lines for bench/run.R.
cat(sprintf("seconds %.4f\npeak_rss_gib %.4f\n", elapsed, peak / 2^30))

ok <- elapsed < 5 && peak < 1.5 * 2^30 && s$parameters == 1536072000 &&
  s$device_weights == s$bytes / 4
if (!ok) {
  cat("FAIL\n")
  quit(status = 1)
}
cat("OK\n")
