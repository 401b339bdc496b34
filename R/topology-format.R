# How a device topology prints, and the modeled time of a cost.

#' @export
format.kerasmesh_device_topology <- function(x, ...) {
  check_dots_none()
  with_edits_named(x, {
    # Printed from its figures as a cost reads them: one edited by hand
    # (`topo$nodes <- NA`, `topo$memory <- "40GB"`) is refused or read the
    # same way, never printed garbled.
    v <- check_topology(x, call = rlang::current_env())
    nodes <- count_text(v$nodes, "node")
    all_reduce <- v$all_reduce_bandwidth %||% NA_real_
    inter_node <- v$inter_node_bandwidth %||% NA_real_
    in_node <- format_rate(v$intra_node_bandwidth)
    if (!is.na(all_reduce) && all_reduce != v$intra_node_bandwidth) {
      in_node <- sprintf("%s (all-reduce %s)", in_node, format_rate(all_reduce))
    }
    links <- data.frame(
      " " = c("in a node", "between nodes"),
      "bus bandwidth" = c(in_node, paste(format_rate(inter_node), "a card")),
      "latency a step" = format_seconds(c(v$intra_node_latency,
                                          v$inter_node_latency)),
      link = ifelse(is.na(x$links), "", x$links),
      check.names = FALSE, stringsAsFactors = FALSE
    )
    if (v$nodes == 1 && is.na(inter_node)) {
      links <- links[1, , drop = FALSE]
    }
    named <- links$link != ""
    kinds <- paste(sprintf("%s %s", links$link[named], links[[1]][named]),
                   collapse = "; ")
    links$link <- NULL
    memory_bandwidth <- v$memory_bandwidth %||% NA_real_
    memory <- bytes_text(v$memory)
    if (!is.na(memory_bandwidth)) {
      memory <- paste(memory, "at", format_rate(memory_bandwidth))
    }
    c(
      sprintf("<kerasmesh_device_topology> %s: %s of %s (%s)",
              v$name, nodes, format_whole(v$devices_per_node),
              count_text(v$nodes * v$devices_per_node, "device")),
      sprintf("Device: %s, memory %s", x$description, memory),
      strwrap(paste(format_peak_flops(unlist(v$peak_flops)), collapse = ", "),
              width = 78, initial = "Peak:   ", prefix = strrep(" ", 8)),
      format_efficiency(c(matmul = v$efficiency,
                          attention = v$attention_efficiency,
                          memory = v$memory_efficiency), memory_bandwidth),
      "Links (NCCL's bus bandwidth):",
      format_table(links, right = c("bus bandwidth", "latency a step")),
      if (any(named)) strwrap(kinds, width = 78, initial = "  ", exdent = 2),
      if (length(x$given)) {
        strwrap(paste0("Given in place of the preset's: ",
                       paste(x$given, collapse = ", ")), width = 78,
                exdent = 2)
      }
    )
  })
}

#' @export
print.kerasmesh_device_topology <- function(x, ...) {
  writeLines(format(x, ...))
  invisible(x)
}

# "Reaches: 72% of peak in matrix products, 50% in attention, 90% of the
# memory bandwidth elsewhere".
format_efficiency <- function(efficiency, memory_bandwidth) {
  e <- efficiency
  memory <- if (is.na(memory_bandwidth)) {
    "memory-bound operations not timed (no memory bandwidth)"
  } else {
    sprintf("%s of memory bandwidth elsewhere", format_share(e[["memory"]]))
  }
  strwrap(sprintf("%s of peak in matrix products, %s in attention, %s",
                  format_share(e[["matmul"]]), format_share(e[["attention"]]),
                  memory), width = 78, initial = "Reaches: ", exdent = 9)
}

# "989 TFLOP/s bfloat16", or "100 TFLOP/s (every dtype)".
format_peak_flops <- function(flops) {
  text <- format_flop_rate(flops)
  if (is.null(names(flops))) {
    return(paste(text, "(every dtype)"))
  }
  paste(text, names(flops))
}

# Rates and FLOP/s with bytes_text()'s units: "450 GB/s", "989 TFLOP/s";
# NA as "-".
format_rate <- function(x) {
  ifelse(is.na(x), "-", paste0(bytes_text(x), "/s"))
}

format_flop_rate <- function(x) {
  paste0(format_flops(x), "/s")
}

# "40%".
format_share <- function(x) {
  paste0(format(signif(100 * x, 3)), "%")
}

# Seconds to three figures in the unit that reads best: "3.4 us" (a micro
# sign in UTF-8), "12.3 ms", "1.25 s", "0 s"; NA as "-".
format_seconds <- function(x) {
  units <- c(s = 1, ms = 1e-3, us = 1e-6, ns = 1e-9)
  if (cli::is_utf8_output()) {
    names(units)[3] <- "\u00b5s"
  }
  vapply(x, function(s) {
    if (is.na(s)) {
      return("-")
    }
    i <- if (s == 0) 1 else match(TRUE, s >= units, nomatch = 4)
    sprintf("%s %s",
            trimws(formatC(s / units[[i]], digits = 3, format = "fg")),
            names(units)[i])
  }, "")
}
