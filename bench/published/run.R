# Published, measured training runs beside kerasmesh's modeled step time
# for the same configuration: each run costed in a process of its own
# (bench/published/cost_run.R), then bench/published/results.csv and a
# table. `Rscript bench/published/run.R [NAME ...]` runs the named rows
# only and keeps the others' results.
here <- dirname(normalizePath(sub("^--file=", "", grep(
  "^--file=", commandArgs(), value = TRUE
))))
source(file.path(here, "runs.R"))
only <- commandArgs(trailingOnly = TRUE)
names <- if (length(only)) only else names(published_runs)
unknown <- setdiff(names, names(published_runs))
if (length(unknown)) {
  stop("Unknown run: ", paste(unknown, collapse = ", "))
}
results_file <- file.path(here, "results.csv")
results <- if (file.exists(results_file)) {
  utils::read.csv(results_file, stringsAsFactors = FALSE)
} else {
  NULL
}

cost_run <- function(name) {
  out <- processx::run(
    "Rscript", c(file.path(here, "cost_run.R"), name), timeout = 3600,
    error_on_status = FALSE, stderr_to_stdout = TRUE,
    env = c("current", LD_LIBRARY_PATH = "")
  )
  lines <- strsplit(out$stdout, "\n", fixed = TRUE)[[1]]
  numeric <- grep("^[a-z_]+ [-0-9.eE+]+\\s*$", lines, value = TRUE)
  fields <- strsplit(trimws(numeric), " +")
  values <- stats::setNames(vapply(fields, function(f) as.numeric(f[[2]]), 1),
                            vapply(fields, function(f) f[[1]], ""))
  label <- function(key) {
    hit <- grep(paste0("^", key, ": "), lines, value = TRUE)
    if (length(hit)) trimws(sub(paste0("^", key, ": "), "", hit[[1]])) else NA
  }
  if (out$status != 0 || is.na(values["modeled"])) {
    cat(tail(lines, 20), sep = "\n")
  }
  list(values = values, compiled_for = label("compiled_for"),
       attention = label("attention"), status = out$status)
}

for (name in names) {
  run <- published_runs[[name]]
  cat(sprintf("%s: %s ...\n", name, run$what))
  got <- cost_run(name)
  v <- got$values
  row <- data.frame(
    run = name, what = run$what, source = run$source,
    devices = 8L * run$nodes, nodes = run$nodes, batch = run$batch,
    sequence = run$sequence, remat = run$remat, kerasmesh_remat = run$lever,
    measured = run$measured, modeled = unname(v["modeled"]),
    ratio = unname(v["modeled"] / run$measured),
    memory_gb = unname(v["memory"] / 1e9), fit = run$fit,
    fits = unname(v["fits"] == 1),
    exposed = unname(v["exposed"]), hidden = unname(v["hidden"]),
    compiled_for = got$compiled_for, attention = got$attention,
    cost_seconds = unname(v["cost_seconds"]),
    peak_rss_gib = unname(v["peak_rss"] / 2^30),
    date = format(Sys.Date()), stringsAsFactors = FALSE
  )
  results <- rbind(results[results$run != name, , drop = FALSE], row)
  utils::write.csv(results, results_file, row.names = FALSE)
  cat(sprintf("  measured %.3f s, modeled %.3f s, ratio %.3f, %.1f GB%s\n",
              run$measured, row$modeled, row$ratio, row$memory_gb,
              if (isTRUE(row$fits)) "" else " (does not fit)"))
}
ordered <- results[match(names(published_runs), results$run), , drop = FALSE]
ordered <- ordered[!is.na(ordered$run), , drop = FALSE]
print(ordered[c("run", "measured", "modeled", "ratio", "memory_gb", "fits")],
      row.names = FALSE, digits = 4)
