# The rows of `Rscript bench/run.R search_topology_MODEL` (sourced by
# bench/run.R, which defines run(), add_row(), rscript and bench_dir).
#
# One run per model: bench/search_topology.R MODEL hand (every hand
# configuration costed at full depth), then, in a fresh R process of its
# own, bench/search_topology.R MODEL search (search_layout() given the
# topology; its time and peak RSS are that process's). Both processes'
# output is kept in bench/search_topology_MODEL.txt. With
# KERASMESH_BENCH_FOUND=false the search is not run, and the found
# columns are NA. A search that fails leaves them NA too, and the row's
# note says why: no row is made up.

topology_hand_labels <- c(
  maxtext = "MaxText-style FSDP", megatron = "Megatron-style TP 8",
  megatron_dp = "Megatron-style TP 4 x DP 2", hub = "keras-hub map",
  hub_dp = "keras-hub map on 2 x 4"
)

# run() that also keeps what the command printed, and does not stop on a
# failure (its status and output are returned).
run_logged <- function(command, args, timeout) {
  start <- Sys.time()
  out <- tryCatch(
    processx::run(command, args, wd = bench_dir, timeout = timeout,
                  error_on_status = FALSE, stderr_to_stdout = TRUE),
    error = function(e) list(status = NA, stdout = conditionMessage(e))
  )
  lines <- strsplit(out$stdout, "\n", fixed = TRUE)[[1]]
  lines <- lines[!grepl("Searching layouts: [0-9]+ (costed|profiled)", lines)]
  numeric_lines <- grep("^[a-z_]+ [-0-9.eE+]+\\s*$", lines, value = TRUE)
  fields <- strsplit(trimws(numeric_lines), " +")
  values <- vapply(fields, function(f) as.numeric(f[[2]]), 1)
  names(values) <- vapply(fields, function(f) f[[1]], "")
  list(status = out$status, lines = lines, values = values,
       wall = as.numeric(difftime(Sys.time(), start, units = "secs")))
}

# The hand configurations' output kept in an earlier run's log
# (KERASMESH_BENCH_HAND=reuse): its header line says when it ran.
reused_hand <- function(path) {
  all <- readLines(path)
  from <- grep("^## hand configurations", all)[1]
  to <- grep("^\\((exit status|end of the reused)", all)
  to <- to[to > from][1]
  lines <- all[seq(from + 1, to - 1)]
  numeric_lines <- grep("^[a-z_]+ [-0-9.eE+]+\\s*$", lines, value = TRUE)
  fields <- strsplit(trimws(numeric_lines), " +")
  values <- vapply(fields, function(f) as.numeric(f[[2]]), 1)
  names(values) <- vapply(fields, function(f) f[[1]], "")
  header <- grep("^# ", all[seq_len(from - 1)], value = TRUE)
  if (any(grepl("^# hand configurations reused from:", header))) {
    header <- header[-1] # the earlier run's own line
  } else {
    header[[1]] <- paste("# hand configurations reused from:",
                         sub("^# ", "", header[[1]]))
  }
  list(lines = lines, values = values, header = header)
}

# The search's output kept in an earlier run's log
# (KERASMESH_BENCH_FOUND=reuse), from its "## search" line to its exit
# status.
reused_search <- function(path) {
  all <- readLines(path)
  from <- grep("^## search", all)[1]
  to <- grep("^\\(exit status", all)
  to <- to[to > from][1]
  lines <- all[seq(from + 1, to)]
  numeric_lines <- grep("^[a-z_]+ [-0-9.eE+]+\\s*$", lines, value = TRUE)
  fields <- strsplit(trimws(numeric_lines), " +")
  values <- vapply(fields, function(f) as.numeric(f[[2]]), 1)
  names(values) <- vapply(fields, function(f) f[[1]], "")
  status <- as.integer(sub("^\\(exit status ([0-9]+).*", "\\1", all[[to]]))
  list(lines = lines, values = values, status = status,
       header = paste(all[[from]], "(reused)"))
}

add_topology_rows <- function(name) {
  size <- sub("^search_topology_", "", name)
  search_timeout <- if (size == "70b") 600 else 300
  load <- function() paste(readLines("/proc/loadavg")[1])
  log <- c(sprintf("# %s, %s; load average at start: %s", name,
                   format(Sys.time(), "%Y-%m-%d %H:%M %Z"), load()))
  path <- file.path(bench_dir, paste0(name, ".txt"))
  if (identical(Sys.getenv("KERASMESH_BENCH_HAND"), "reuse") &&
      file.exists(path)) {
    hand <- reused_hand(path)
    log <- c(log, hand$header, "## hand configurations (reused)", hand$lines,
             "(end of the reused hand configurations)")
  } else {
    hand <- run_logged(rscript, c("search_topology.R", size, "hand"), 7200)
    log <- c(log, "## hand configurations", hand$lines,
             sprintf("(exit status %s, %.0f s)", hand$status, hand$wall))
  }
  found <- NULL
  why <- "search not run (KERASMESH_BENCH_FOUND=false)"
  mode <- Sys.getenv("KERASMESH_BENCH_FOUND")
  if (identical(mode, "reuse") && file.exists(path)) {
    found <- reused_search(path)
    log <- c(log, found$header, found$lines)
  } else if (!identical(mode, "false")) {
    log <- c(log, sprintf("## search, load average at start: %s", load()))
    found <- run_logged(rscript, c("search_topology.R", size, "search",
                                   search_timeout), 3 * search_timeout + 1200)
    log <- c(log, found$lines, sprintf("(exit status %s, %.0f s)",
                                       found$status, found$wall))
  }
  searched <- if (is.null(found)) c() else found$values
  if (!is.null(found) && (!identical(as.integer(found$status), 0L) ||
                          !"found_time_s" %in% names(found$values))) {
    why <- paste("search failed:", tail(grep("^Error|error", found$lines,
                                            value = TRUE), 1))
    found <- NULL
  }
  writeLines(log, path)
  h <- hand$values
  f <- if (is.null(found)) c() else found$values
  get <- function(v, key) if (key %in% names(v)) v[[key]] else NA_real_
  configs <- intersect(names(topology_hand_labels),
                       sub("_time_s$", "", grep("_time_s$", names(h),
                                                value = TRUE)))
  describe <- function(v, p, remat = "full") {
    sprintf(paste("%s x %s (data x model), remat %s, k = %s,",
                  "%.1f GB per device (%s 80 GB); traffic per batch:",
                  "data %.1f GB, model %.1f GB; seconds: compute %.2f,",
                  "recompute %.2f, data %.2f, model %.2f"),
            get(v, paste0(p, "_data")), get(v, paste0(p, "_model")), remat,
            get(v, paste0(p, "_accumulation")), get(v, paste0(p, "_memory_gb")),
            if (isTRUE(get(v, paste0(p, "_fits")) == 1)) "fits" else
              "does not fit",
            get(v, paste0(p, "_traffic_data_gb")),
            get(v, paste0(p, "_traffic_model_gb")),
            get(v, paste0(p, "_compute_s")),
            get(v, paste0(p, "_recompute_s")),
            get(v, paste0(p, "_comm_data_s")),
            get(v, paste0(p, "_comm_model_s")))
  }
  prefix <- paste0("topo_", size)
  for (cfg in configs) {
    label <- topology_hand_labels[[cfg]]
    note <- paste0(label, ": ", describe(h, cfg))
    add_row(paste0(prefix, "_vs_", cfg, "_time"), paste0("found / ", label),
            "s", "lower", get(f, "found_time_s"),
            get(h, paste0(cfg, "_time_s")),
            paste("modeled step time per global batch;", note))
    add_row(paste0(prefix, "_vs_", cfg, "_memory"), paste0("found / ", label),
            "GB", "lower", get(f, "found_memory_gb"),
            get(h, paste0(cfg, "_memory_gb")),
            "XLA's memory per device at full depth; fits: <= 80 GB")
    for (axis in c("data", "model")) {
      add_row(paste0(prefix, "_vs_", cfg, "_traffic_", axis),
              paste0("found / ", label), "GB", "lower",
              get(f, paste0("found_traffic_", axis, "_gb")),
              get(h, sprintf("%s_traffic_%s_gb", cfg, axis)),
              sprintf("bytes per device per global batch over \"%s\"", axis))
    }
  }
  fitting <- configs[vapply(configs, function(cfg) {
    isTRUE(get(h, paste0(cfg, "_fits")) == 1)
  }, TRUE)]
  best <- if (length(fitting)) {
    fitting[[which.min(vapply(fitting, function(cfg) {
      get(h, paste0(cfg, "_time_s"))
    }, 1))]]
  }
  found_note <- why
  if (!is.null(found)) {
    said <- function(what) {
      key <- paste0("^found ", what, ": ")
      trimws(sub(key, "", grep(key, found$lines, value = TRUE)[1]))
    }
    verified <- if (isTRUE(get(f, "found_verified") == 1)) {
      ", verified by XLA at full depth"
    } else {
      ", NOT verified at full depth (the search ran out of time)"
    }
    found_note <- paste0("found: ", describe(f, "found", said("remat")),
                         ", device order ", said("order"), verified)
  }
  add_row(paste0(prefix, "_found_vs_best_time"),
          "found / best fitting hand", "s", "lower", get(f, "found_time_s"),
          if (is.null(best)) NA_real_ else get(h, paste0(best, "_time_s")),
          paste0("target <= 0.9; best fitting hand: ",
                 if (is.null(best)) "none fits" else
                   topology_hand_labels[[best]], "; ", found_note))
  add_row(paste0(prefix, "_search_time"), "search_layout(topology)", "s",
          "lower", get(searched, "seconds"), NA_real_,
          sprintf("goal <= %d s; timeout %d s", if (size == "70b") 600L else
            300L, search_timeout))
  add_row(paste0(prefix, "_search_memory"), "peak RSS", "GiB", "lower",
          get(searched, "peak_rss_gib"), NA_real_,
          sprintf(paste("the search's own R process; goal < 2 GiB (the hand",
                        "costs' process: %.2f GiB)"),
                  get(h, "hand_peak_rss_gib")))
}
