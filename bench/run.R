# `make bench`: kerasmesh beside plain Keras in Python, measured in the same
# run, each benchmark in fresh processes, reported as ratios.
# Writes bench/results.csv and prints the table.
#
# `Rscript bench/run.R NAME ...` (or `make bench BENCH="NAME ..."`) runs only
# the named benchmarks (throughput, startup, layout_resolution, book_plan,
# book_cost, hub_70b, search_8b, search_8b_32, search_70b, search_gemma,
# search_qwen2, search_exhaustive, search_mlp, checkpoint, search_topology_8b,
# search_topology_70b, search_topology_gemma; search_topology or
# search-topology for all three) and replaces only their rows in
# bench/results.csv.
# book_cost compares with the Keras baseline that allocates the book's model
# (15 GiB), run once for book_plan; run without book_plan it skips that
# baseline unless KERASMESH_BENCH_BASELINE=true.
bench_dir <- dirname(normalizePath(sub("^--file=", "", grep(
  "^--file=", commandArgs(), value = TRUE
))))
python <- file.path(Sys.getenv("KERASMESH_VENV",
                               path.expand("~/.virtualenvs/r-keras")),
                    "bin", "python")
reps <- as.integer(Sys.getenv("KERASMESH_BENCH_REPS", "3"))
Sys.setenv(KERAS_BACKEND = "jax", JAX_PLATFORMS = "cpu",
           XLA_FLAGS = "--xla_force_host_platform_device_count=8")

# Runs a command; returns its wall time and the "name value" lines it printed.
# R's LD_LIBRARY_PATH (/usr/lib/x86_64-linux-gnu first) is dropped: with it,
# the virtualenv's Python loads the system's libpython instead of its own,
# `import ssl` fails, so does Orbax's `import uvloop`, and then every Orbax
# load ("incompatible handler").
run <- function(command, args, timeout = 600) {
  start <- Sys.time()
  out <- processx::run(command, args, wd = bench_dir, timeout = timeout,
                       error_on_status = TRUE, stderr_to_stdout = TRUE,
                       env = c("current", LD_LIBRARY_PATH = ""))
  wall <- as.numeric(difftime(Sys.time(), start, units = "secs"))
  lines <- strsplit(out$stdout, "\n", fixed = TRUE)[[1]]
  fields <- strsplit(trimws(grep("^[a-z_]+ [-0-9.eE+]+\\s*$", lines,
                                 value = TRUE)), " +")
  values <- vapply(fields, function(f) as.numeric(f[[2]]), 1)
  names(values) <- vapply(fields, function(f) f[[1]], "")
  list(wall = wall, values = values)
}

benchmarks <- c("throughput", "startup", "layout_resolution", "book_plan",
                "book_cost", "hub_70b", "search_8b", "search_8b_32", "search_70b",
                "search_gemma", "search_qwen2", "search_exhaustive",
                "search_mlp", "checkpoint", "search_topology_8b", "search_topology_70b",
                "search_topology_gemma")
only <- commandArgs(trailingOnly = TRUE)
topology_names <- c("search_topology_8b", "search_topology_gemma",
                    "search_topology_70b")
only <- unique(unlist(lapply(only, function(name) {
  if (name %in% c("search_topology", "search-topology")) topology_names else
    name
})))
unknown <- setdiff(only, benchmarks)
if (length(unknown)) {
  stop("Unknown benchmark: ", paste(unknown, collapse = ", "),
       ". Choose from: ", paste(benchmarks, collapse = ", "), ".")
}
wanted <- function(name) length(only) == 0 || name %in% only

rscript <- file.path(R.home("bin"), "Rscript")
results <- list()
add_row <- function(benchmark, metric, unit, better, ours, theirs, note = "") {
  ratio <- stats::median(ours) / stats::median(theirs, na.rm = TRUE)
  results[[length(results) + 1]] <<- data.frame(
    benchmark = benchmark, metric = metric, unit = unit, better = better,
    reps = length(ours),
    kerasmesh_min = min(ours), kerasmesh_median = stats::median(ours),
    baseline_min = if (all(is.na(theirs))) NA_real_ else
      min(theirs, na.rm = TRUE),
    baseline_median = stats::median(theirs, na.rm = TRUE),
    ratio = ratio, note = note, stringsAsFactors = FALSE
  )
  message(sprintf("%-22s %-18s ratio %.3f", benchmark, metric, ratio))
}

# 1. Training throughput: R drives the same training loop as Python.
if (wanted("throughput")) {
ours <- theirs <- numeric()
for (i in seq_len(3)) {
  ours <- c(ours, run(rscript, c("throughput.R", reps))$values)
  theirs <- c(theirs, run(python, c("throughput.py", reps))$values)
}
add_row("training_throughput", "steps per second", "steps/s", "higher",
        ours, theirs, "2x4 mesh, model parallel, MLP 512-2048-2048-512")
}

# 2. Start-up, whole fresh processes.
if (wanted("startup")) {
library_time <- bare_time <- numeric()
for (i in seq_len(reps + 2)) {
  library_time <- c(library_time, run(rscript, c("-e", paste(
    "library(kerasmesh);",
    "stopifnot(!'reticulate' %in% loadedNamespaces())"
  )))$wall)
  bare_time <- c(bare_time, run(rscript, c("-e", "invisible(NULL)"))$wall)
}
add_row("startup_library", "library(kerasmesh)", "s", "lower",
        library_time, bare_time, "baseline: Rscript alone; neither reticulate nor Python loaded")
mesh_time <- keras_time <- numeric()
for (i in seq_len(reps)) {
  mesh_time <- c(mesh_time, run(rscript, c("-e", paste(
    "library(kerasmesh); simulate_devices(8);",
    "invisible(device_mesh(c(data = 2, model = 4)))"
  )))$wall)
  keras_time <- c(keras_time, run(python, c("-c", paste(
    "import keras;",
    "m = keras.distribution.DeviceMesh((2, 4), ['data', 'model']);",
    "m.backend_mesh"
  )))$wall)
}
add_row("startup_first_mesh", "first device_mesh()", "s", "lower",
        mesh_time, keras_time, "baseline: python -c import keras + DeviceMesh")
}

# 3. Layout resolution: 10,000 paths x 100 rules.
if (wanted("layout_resolution")) {
res <- lapply(seq_len(reps), function(i) {
  run(python, "layout_resolution.py")$values
})
add_row("layout_resolution", "10k paths x 100 rules", "s", "lower",
        vapply(res, function(v) v[["kerasmesh_seconds"]], 1),
        vapply(res, function(v) v[["keras_seconds"]], 1),
        "baseline: Keras LayoutMap lookups; results agree rule for rule")
}

# 4. Planning the book's 1.54-billion-parameter model. Its baseline, Keras
# allocating the model (15 GiB peak), runs once and serves book_cost too.
keras_build <- NULL
if (wanted("book_plan") ||
    identical(Sys.getenv("KERASMESH_BENCH_BASELINE"), "true")) {
  keras_build <- run(python, c("book_build.py"))$values
}
if (wanted("book_plan")) {
plan <- lapply(seq_len(reps), function(i) {
  run(rscript, "book_plan.R")$values
})
add_row("book_plan_time", "plan 1.54e9 params", "s", "lower",
        vapply(plan, function(v) v[["seconds"]], 1),
        keras_build[["seconds"]],
        "baseline: Keras builds the model to read its variables")
add_row("book_plan_memory", "peak RSS", "GiB", "lower",
        vapply(plan, function(v) v[["peak_rss_gib"]], 1),
        keras_build[["peak_rss_gib"]],
        "R process with layout_plan() vs Python process building the model")
}

# 5. Costing one training step of the book's model (layout_cost()), and
# data parallel against model parallel on it (compare_layouts()).
if (wanted("book_cost")) {
  cost <- lapply(seq_len(reps), function(i) {
    run(rscript, "book_cost.R")$values
  })
  base <- function(name) {
    if (is.null(keras_build)) NA_real_ else keras_build[[name]]
  }
  field <- function(name) vapply(cost, function(v) v[[name]], 1)
  add_row("book_cost_time", "cost 1.54e9 params", "s", "lower",
          field("seconds"), base("seconds"),
          "layout_cost() compiles a step abstractly; baseline: Keras builds the model")
  add_row("book_cost_memory", "peak RSS", "GiB", "lower",
          field("peak_rss_gib"), base("peak_rss_gib"),
          "R process with layout_cost() vs Python process building the model")
  add_row("book_compare_memory", "total per device", "GB", "lower",
          field("mp_total_gb"), field("dp_total_gb"),
          "compare_layouts(): 2x4 model parallel vs data parallel over 8")
  add_row("book_compare_traffic", "bytes per step", "GB", "lower",
          field("mp_traffic_gb"), field("dp_traffic_gb"),
          "collectives per device per step: model parallel vs data parallel")
}

# 6. Planning a Llama-3-70B-sized keras-hub backbone on 32 devices.
if (wanted("hub_70b")) {
plan <- lapply(seq_len(reps), function(i) {
  run(rscript, "hub_70b_plan.R")$values
})
keras_build <- lapply(seq_len(reps), function(i) {
  run(python, "hub_70b_build.py")$values
})
add_row("hub_70b_plan_time", "plan 7.06e10 params", "s", "lower",
        vapply(plan, function(v) v[["seconds"]], 1),
        vapply(keras_build, function(v) v[["seconds"]], 1),
        paste("4x8 mesh of 32 devices, keras-hub's own layout map;",
              "baseline: Keras builds it under StatelessScope, no plan"))
add_row("hub_70b_plan_memory", "peak RSS", "GiB", "lower",
        vapply(plan, function(v) v[["peak_rss_gib"]], 1),
        vapply(keras_build, function(v) v[["peak_rss_gib"]], 1),
        "R process with layout_plan() vs Python process building abstractly")
}

# 7. search_layout() on keras-hub backbones (bench/search_hub.R): the found
# map against keras-hub's own map and, for Llama, a hand-written
# tensor-parallel map, costed in the same run (each search takes minutes).
add_search_rows <- function(name, args, what, timeout = 1800) {
  v <- run(rscript, c("search_hub.R", args), timeout = timeout)$values
  depth <- sprintf("%s blocks", args[[1]])
  add_row(paste0(name, "_time"), paste0("search, ", depth), "s", "lower",
          v[["seconds"]], NA_real_,
          sprintf("%s, timeout %s s; goal <= %s s", what, args[[2]],
                  args[[2]]))
  add_row(paste0(name, "_memory"), "peak RSS", "GiB", "lower",
          v[["peak_rss_gib"]], NA_real_, "R process; goal < 2 GiB")
  for (map in intersect(c("hub", "tp"), sub("_memory_gb$", "", names(v)))) {
    label <- c(hub = "keras-hub map", tp = "tensor-parallel map")[[map]]
    for (figure in c("traffic", "memory")) {
      add_row(sprintf("%s_vs_%s_%s", name, map, figure),
              paste0("found / ", label), "GB", "lower",
              v[[paste0("found_", figure, "_gb")]],
              v[[sprintf("%s_%s_gb", map, figure)]],
              sprintf("verified %s per device at %s", figure, depth))
    }
  }
}
searches <- list(
  search_8b = list(c("2", "120", "8b"), "Llama-3-8B-shaped, 2x4 mesh"),
  search_8b_32 = list(c("32", "120", "8b"), "Llama-3-8B-shaped, 2x4 mesh"),
  search_70b = list(c("80", "300", "70b"),
                    "Llama-3-70B-sized, 4x8 mesh of 32 devices", 3600),
  search_gemma = list(c("2", "120", "gemma"),
                      "Gemma-7B-shaped, 2x4 mesh, budget keras-hub's memory"),
  search_qwen2 = list(c("2", "120", "qwen2"),
                      "Qwen2-7B-shaped, 2x4 mesh, budget keras-hub's memory")
)
for (name in names(searches)) {
  if (wanted(name)) do.call(add_search_rows, c(name, searches[[name]]))
}

# 8. The layout families against the exhaustive optimum where that is feasible.
if (wanted("search_exhaustive")) {
  v <- run(python, "search_exhaustive.py")$values
  add_row("search_exhaustive", "families / exhaustive traffic", "B", "lower",
          v[["families_traffic"]], v[["exhaustive_traffic"]],
          sprintf("Dense 32-6-16, 2x4, biases pinned: %d vs %d layouts profiled",
                  as.integer(v[["families_costed"]]),
                  as.integer(v[["exhaustive_costed"]])))
}

# 8b. A small search on a topology, cold and then warm (its cache), against
# the targets (20 s cold, 10 s warm).
if (wanted("search_mlp")) {
  v <- run(rscript, "search_mlp.R", timeout = 900)$values
  add_row("search_mlp", "cold search / 20 s", "s", "lower",
          v[["cold_seconds"]], 20,
          sprintf("five-layer MLP, 1 node of 8 H100, 3.5 MB: %d compiles",
                  as.integer(v[["cold_compiles"]])))
  add_row("search_mlp", "warm search / 10 s", "s", "lower",
          v[["warm_seconds"]], 10,
          sprintf("the same, %d figures from the cache, %d compiles",
                  as.integer(v[["warm_cache_hits"]]),
                  as.integer(v[["warm_compiles"]])))
}

# 9. Checkpoints (bench/checkpoint.py): the stall per save in fit() beside
# Keras's OrbaxCheckpoint(save_on_background = TRUE), save and restore
# beside Orbax's own calls, and a 2-process x 4-device save.
if (wanted("checkpoint")) {
  # A row of seconds: field `ours` of the runs `mine` beside field `theirs`
  # of the runs `base`.
  seconds_row <- function(name, metric, mine, base, ours, theirs, note) {
    field <- function(runs, key) vapply(runs, function(v) v[[key]], 1)
    add_row(name, metric, "s", "lower", field(mine, ours),
            field(base, theirs), note)
  }
  ours <- theirs <- list()
  for (i in seq_len(reps)) {
    ours[[i]] <- run(python, c("checkpoint.py", "stall", "kerasmesh"),
                     timeout = 1800)$values
    theirs[[i]] <- run(python, c("checkpoint.py", "stall", "keras"),
                       timeout = 1800)$values
  }
  stall_row <- function(name, metric, key, note) {
    seconds_row(name, metric, ours, theirs, key, key, note)
  }
  stall_row("checkpoint_stall", "stall per save", "stall_seconds",
            paste("time fit() spends in the callback per save; 1.0 GB of",
                  "state, 2x4 mesh, a save every 5 of 30 steps; baseline:",
                  "Keras OrbaxCheckpoint(save_on_background=TRUE)"))
  stall_row("checkpoint_end_wait", "end of fit() wait", "end_wait_seconds",
            "on_train_end waiting for the last save")
  stall_row("checkpoint_fit", "fit() with saves", "fit_seconds",
            "the same 30 steps, 6 saves, whole fit() time")
  io <- lapply(seq_len(reps), function(i) {
    run(python, c("checkpoint.py", "saveload"), timeout = 1800)$values
  })
  multi <- lapply(seq_len(reps), function(i) {
    run(python, c("checkpoint.py", "multi"), timeout = 1200)$values
  })
  rows <- list(
    list("checkpoint_save", "save 1.0 GB", io, "kerasmesh_save", "orbax_save",
         "save_checkpoint() vs Orbax's save_checkpointables() (zstd)"),
    list("checkpoint_restore", "restore 1.0 GB", io, "kerasmesh_restore",
         "orbax_restore",
         "restore_checkpoint() vs Orbax's load_checkpointables() (zstd)"),
    list("checkpoint_save_raw", "save 1.0 GB", io, "kerasmesh_save",
         "orbax_raw_save",
         "the same vs Orbax writing uncompressed, as kerasmesh does"),
    list("checkpoint_restore_raw", "restore 1.0 GB", io, "kerasmesh_restore",
         "orbax_raw_restore", "the same vs Orbax reading its uncompressed step"),
    list("checkpoint_multi_save", "save, 2 processes", multi,
         "multi_kerasmesh_save", "multi_orbax_save",
         "2 processes x 4 devices vs Orbax's save_checkpointables() (zstd)"),
    list("checkpoint_multi_save_raw", "save, 2 processes", multi,
         "multi_kerasmesh_save", "multi_orbax_raw_save",
         "the same vs Orbax writing uncompressed")
  )
  for (r in rows) seconds_row(r[[1]], r[[2]], r[[3]], r[[3]], r[[4]], r[[5]],
                              r[[6]])
}

# 10. search_layout() on a topology beside hand-written configurations
# (bench/search_topology.R, bench/search_topology_rows.R).
source(file.path(bench_dir, "search_topology_rows.R"))
for (name in topology_names) {
  if (wanted(name)) add_topology_rows(name)
}

table <- do.call(rbind, results)
csv <- file.path(bench_dir, "results.csv")
if (length(only) && file.exists(csv)) {
  # Keep the other benchmarks' rows, in their places.
  old <- utils::read.csv(csv, stringsAsFactors = FALSE)
  new <- table
  table <- rbind(old[!old$benchmark %in% new$benchmark, , drop = FALSE], new)
  order <- match(table$benchmark, unique(c(old$benchmark, new$benchmark)))
  table <- table[order(order), , drop = FALSE]
}
utils::write.csv(table, csv, row.names = FALSE)
shown <- table
num <- vapply(shown, is.numeric, TRUE) & names(shown) != "reps"
shown[num] <- lapply(shown[num], function(x) signif(x, 3))
cores <- parallel::detectCores()
mem <- round(as.numeric(sub("\\D+(\\d+).*", "\\1", grep(
  "MemTotal", readLines("/proc/meminfo"), value = TRUE
))) / 1024^2, 1)
cat(sprintf("\nkerasmesh benchmarks: %d cores, %s GiB, %s\n", cores, mem,
            format(Sys.time(), "%Y-%m-%d")))
cat("ratio = kerasmesh median / baseline median\n\n")
options(width = 150)
print(shown[, c("benchmark", "metric", "better", "reps", "kerasmesh_min",
                "kerasmesh_median", "baseline_min", "baseline_median",
                "ratio")], row.names = FALSE)
