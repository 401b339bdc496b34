# Benchmark: what search_layout() finds on a topology, beside the
# hand-written configurations people train with, every one costed by the
# same model (layout_cost(..., remat =, accumulation_steps =, topology =))
# and verified by XLA at full depth.
#
#   Rscript bench/search_topology.R MODEL hand [CONFIG ...]
#   Rscript bench/search_topology.R MODEL search [TIMEOUT]
#
# MODEL is 8b, 70b or gemma (bench/topology_configs.R): Llama-3-8B-shaped
# (32 blocks, batch 64 x 4096) on one node of 8 H100 80 GB; Llama-3-70B-
# sized (80 blocks, batch 128 x 4096) on 4 nodes of 8; Gemma-7B-shaped (28
# blocks, batch 64 x 4096) on one node of 8. Adam, mixed bfloat16.
#
# "hand" costs each hand configuration (MaxText-style FSDP, Megatron-style
# tensor parallel, keras-hub's get_layout_map(); remat "full") at full
# depth with the fewest accumulation_steps (powers of two) that fit 80 GB
# per device by XLA: k = 1, then the most the data axis allows (if even
# that does not fit, or the weights and Adam state alone exceed 80 GB,
# nothing does), then a bisection between them (see cost_hand()).
# "search" runs search_layout(build, topology, ...) in this process
# alone (its time and peak RSS are the search's) and prints the found
# configuration's verified figures.
#
# Prints "name value" lines (bench/run.R reads them) and a table.

source(file.path(dirname(sub("^--file=", "", grep(
  "^--file=", commandArgs(), value = TRUE
))), "common.R"))
source(file.path(dirname(sub("^--file=", "", grep(
  "^--file=", commandArgs(), value = TRUE
))), "topology_configs.R"))

args <- commandArgs(trailingOnly = TRUE)
size <- if (length(args) >= 1) args[[1]] else "8b"
part <- if (length(args) >= 2) args[[2]] else "hand"
timeout <- if (length(args) >= 3 && part == "search") as.numeric(args[[3]]) else
  300
only_configs <- if (part == "hand") args[-(1:2)] else character()
model <- topology_models[[size]]
if (is.null(model)) {
  stop("MODEL must be one of ", toString(names(topology_models)))
}
devices <- 8L * model$nodes
simulate_devices(devices)
topo <- device_topology("h100-sxm-80gb", nodes = model$nodes)
memory <- topo$memory
build <- topology_builder(model)
shapes <- list(token_ids = 4096, padding_mask = 4096)

`%||%` <- function(x, y) if (is.null(x)) y else x
line <- function(name, value) cat(sprintf("%s %.6g\n", name, value))
gb <- function(x) x / 1e9

# The figures of one cost, per global batch: traffic is the compiled
# micro-step's times the accumulation steps.
cost_figures <- function(cost) {
  k <- cost$accumulation_steps
  traffic <- cost$traffic
  comm <- stats::setNames(cost$time$communication$exposed,
                          cost$time$communication$axes)
  axis <- function(v, a) sum(v[names(v) == a])
  list(
    need = cost$need, time = cost$time$total, k = k,
    compute = cost$time$compute, recompute = cost$time$recompute,
    traffic_data = k * axis(traffic, "data"),
    traffic_model = k * axis(traffic, "model"),
    traffic_other = k * sum(traffic[!names(traffic) %in% c("data", "model")]),
    comm_data = axis(comm, "data"), comm_model = axis(comm, "model"),
    comm_other = sum(comm[!names(comm) %in% c("data", "model")]),
    compile = cost$compile_seconds, reshardings = nrow(cost$reshardings)
  )
}

print_figures <- function(prefix, f, mesh) {
  line(paste0(prefix, "_time_s"), f$time)
  line(paste0(prefix, "_memory_gb"), gb(f$need))
  line(paste0(prefix, "_fits"), as.numeric(f$need <= memory))
  line(paste0(prefix, "_accumulation"), f$k)
  line(paste0(prefix, "_data"), mesh[["data"]])
  line(paste0(prefix, "_model"), mesh[["model"]])
  for (n in c("compute", "recompute", "comm_data", "comm_model",
              "comm_other")) {
    line(paste0(prefix, "_", n, "_s"), f[[n]])
  }
  for (n in c("traffic_data", "traffic_model", "traffic_other")) {
    line(paste0(prefix, "_", n, "_gb"), gb(f[[n]]))
  }
}

# One cost of a hand configuration at k accumulation steps, said in a
# "try" line; NULL after an error.
cost_try <- function(name, distribution, k) {
  started <- Sys.time()
  cost <- tryCatch(
    layout_cost(function() build(), distribution, batch_size = model$batch,
                optimizer = "adam", input_shapes = shapes, remat = "full",
                accumulation_steps = k, topology = topo, timeout = 1800),
    error = function(e) e
  )
  wall <- as.numeric(Sys.time() - started, units = "secs")
  if (inherits(cost, "error")) {
    cat(sprintf("try %s k=%d: error: %s\n", name, k, conditionMessage(cost)))
    return(NULL)
  }
  f <- cost_figures(cost)
  f$argument <- cost$xla[["argument"]]
  cat(sprintf(paste("try %s k=%d: %.1f GB per device (arguments %.1f GB,",
                    "temporaries %.1f GB), %.2f s per batch, %s, wall %.0f s,",
                    "compile %.0f s, %d reshardings\n"),
              name, k, gb(f$need), gb(f$argument), gb(cost$xla[["temp"]]),
              f$time, if (f$need <= memory) "fits" else "does not fit", wall,
              f$compile, f$reshardings))
  f
}

# One hand configuration: the fewest accumulation steps that fit. k = 1
# first (no accumulators); then the most micro-batches the data axis
# allows: when even that does not fit (or the arguments alone exceed the
# memory), nothing does; else a bisection for the smallest k that fits,
# memory taken to fall as k grows from 2 on.
cost_hand <- function(name, config) {
  distribution <- hand_distribution(config, model)
  ks <- accumulation_tries(model$batch, config$mesh[["data"]])
  tried <- list()
  try_k <- function(k) {
    f <- cost_try(name, distribution, k)
    if (!is.null(f)) tried[[as.character(k)]] <<- f
    f
  }
  fits <- function(f) !is.null(f) && f$need <= memory
  first <- try_k(ks[[1]])
  best <- if (fits(first)) first
  if (is.null(best) && !is.null(first) && length(ks) > 1 &&
      first$argument < memory) {
    rest <- ks[-1]
    last <- try_k(rest[[length(rest)]])
    if (fits(last)) {
      best <- last
      lo <- 0L
      hi <- length(rest)
      while (hi - lo > 1) {
        mid <- (lo + hi) %/% 2
        f <- try_k(rest[[mid]])
        if (fits(f)) {
          best <- f
          hi <- mid
        } else {
          lo <- mid
        }
      }
    }
  }
  if (!length(tried)) return(invisible(NULL))
  if (is.null(best)) {
    # Nothing fits: the smallest memory reached.
    needs <- vapply(tried, function(t) t$need, 1)
    best <- tried[[which.min(needs)]]
  }
  cat(sprintf("chose %s k=%d (tried k = %s)\n", name, best$k,
              paste(names(tried), collapse = ", ")))
  print_figures(name, best, config$mesh)
  line(paste0(name, "_tries"), length(tried))
  invisible(best)
}

if (part == "hand") {
  cat(model$label, "\n")
  configs <- hand_configs(model)
  if (length(only_configs)) configs <- configs[only_configs]
  for (name in names(configs)) {
    cat(sprintf("config %s: %s\n", name, configs[[name]]$what))
    cost_hand(name, configs[[name]])
  }
  line("hand_peak_rss_gib", peak_rss() / 2^30)
} else if (part == "search") {
  cat(model$label, "\n")
  started <- Sys.time()
  # A cold search unless KERASMESH_BENCH_CACHE names a cache to reuse.
  cache <- Sys.getenv("KERASMESH_BENCH_CACHE", tempfile("kerasmesh-cache-"))
  found <- search_layout(build, topo, batch_size = model$batch,
                         optimizer = "adam", input_shapes = shapes,
                         memory = memory, blocks = model$blocks,
                         timeout = timeout, cache = cache)
  elapsed <- as.numeric(Sys.time() - started, units = "secs")
  print(found)
  line("seconds", elapsed)
  line("compiles", found$compiles)
  line("cache_hits", found$cache$hits)
  line("peak_rss_gib", peak_rss() / 2^30)
  if (!is.null(found$cost)) {
    f <- cost_figures(found$cost)
    print_figures("found", f, found$mesh$shape)
  } else {
    # Not verified at full depth: the search's own (extrapolated) figures.
    line("found_time_s", found$time$total %||% NA_real_)
    line("found_memory_gb", gb(found$need %||% NA_real_))
    line("found_accumulation", found$accumulation_steps)
    line("found_data", found$mesh$shape[["data"]])
    line("found_model", found$mesh$shape[["model"]])
  }
  line("found_verified", as.numeric(isTRUE(found$verified)))
  cat("found remat:",
      gsub("\"", "", kerasmesh:::remat_label(found$remat)), "\n")
  cat("found order:", format(found$device_order %||% NA), "\n")
} else {
  stop("PART must be hand or search")
}
