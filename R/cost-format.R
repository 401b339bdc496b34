# The objects layout_cost() and compare_layouts() return, and their
# console renderings.

new_layout_cost <- function(desc) {
  num <- function(x) vapply(x, function(v) as.numeric(v), 1)
  ops <- desc$ops
  collectives <- data.frame(
    kind = as.character(unlist(desc$collectives$kind)),
    axes = as.character(unlist(desc$collectives$axes)),
    count = as.integer(unlist(desc$collectives$count)),
    bytes = as.numeric(unlist(desc$collectives$bytes)),
    stringsAsFactors = FALSE
  )
  ops_df <- data.frame(
    kind = vapply(ops, function(o) o$kind, ""),
    axes = vapply(ops, function(o) paste(unlist(o$axes), collapse = "+"), ""),
    bytes = vapply(ops, function(o) as.numeric(o$bytes), 1),
    stringsAsFactors = FALSE
  )
  ops_df$shapes <- lapply(ops, function(o) lapply(o$shapes, whole_numbers))
  ops_df$groups <- lapply(ops, function(o) lapply(o$groups, as.integer))
  summary <- desc$plan
  summary$unmatched <- as.character(unlist(summary$unmatched))
  summary$dtypes <- as.character(unlist(summary$dtypes))
  structure(
    list(
      memory = num(desc$memory),
      xla = num(desc$xla),
      collectives = collectives,
      traffic = traffic_by_axis(collectives),
      ops = ops_df,
      attribution = new_cost_attribution(desc$attribution),
      plan = summary,
      mesh = new_device_mesh(desc$mesh),
      distribution = desc$distribution,
      batch_size = as.integer(desc$batch_size),
      batch_dim_name = desc$batch_dim_name,
      loss = desc$loss,
      inputs = data.frame(
        name = as.character(unlist(desc$inputs$name)),
        shape = I(lapply(desc$inputs$shape, whole_numbers)),
        dtype = as.character(unlist(desc$inputs$dtype)),
        stringsAsFactors = FALSE
      ),
      compile_seconds = desc$compile_seconds,
      versions = desc$versions,
      warnings = as.character(unlist(desc$warnings)),
      remat = desc$remat %||% "none",
      accumulation_steps = as.integer(desc$accumulation_steps %||% 1L),
      micro_batch_size = as.integer(desc$micro_batch_size %||%
                                      desc$batch_size),
      flops = as.numeric(desc$flops %||% NA_real_),
      recompute_flops = as.numeric(desc$recompute_flops %||% 0)
    ),
    class = "kerasmesh_layout_cost"
  )
}

# Bytes per device per step by mesh axis ("" for none), largest first.
traffic_by_axis <- function(collectives) {
  if (nrow(collectives) == 0) {
    return(stats::setNames(numeric(), character()))
  }
  by_axis <- tapply(collectives$bytes, collectives$axes, sum)
  sort(stats::setNames(as.numeric(by_axis), names(by_axis)),
       decreasing = TRUE)
}

new_layout_comparison <- function(costs, limit = NULL) {
  memory <- function(part) vapply(costs, function(c) c$memory[[part]], 1)
  df <- data.frame(
    layout = names(costs),
    mesh = vapply(costs, function(c) {
      shape <- .subset2(c$mesh, "shape")
      paste(sprintf("%s=%d", names(shape), shape), collapse = ",")
    }, ""),
    stringsAsFactors = FALSE
  )
  for (part in c("weights", "optimizer", "inputs", "activations", "outputs",
                 "total")) {
    df[[part]] <- memory(part)
  }
  df$traffic <- vapply(costs, function(c) sum(c$collectives$bytes), 1)
  df$collectives <- vapply(costs, function(c) sum(c$collectives$count), 1L)
  df$compile_seconds <- vapply(costs, function(c) c$compile_seconds, 1)
  if (!is.null(limit)) {
    df$fits <- df$total <= limit
  }
  rownames(df) <- NULL
  traffic <- do.call(rbind, c(
    list(data.frame(layout = character(), axes = character(),
                    kind = character(), count = integer(),
                    bytes = numeric(), stringsAsFactors = FALSE)),
    lapply(names(costs), function(n) {
      col <- costs[[n]]$collectives
      if (nrow(col) == 0) return(NULL)
      cbind(data.frame(layout = n, stringsAsFactors = FALSE),
            col[, c("axes", "kind", "count", "bytes")])
    })
  ))
  rownames(traffic) <- NULL
  structure(
    df,
    traffic = traffic,
    costs = costs,
    device_memory = limit,
    model = costs[[1]]$plan$model,
    batch_size = costs[[1]]$batch_size,
    class = c("kerasmesh_layout_comparison", "data.frame")
  )
}

#' @export
format.kerasmesh_layout_cost <- function(x, ..., device_memory = NULL) {
  limit <- parse_limit(device_memory)
  m <- x$memory
  s <- x$plan
  labels <- c(weights = "weights", optimizer = "optimizer state",
              inputs = "batch (inputs, targets)",
              activations = "gradients, activations",
              outputs = "other outputs", total = "total")
  memory <- data.frame(" " = labels, "per device" = format_bytes(m[names(
    labels)]), check.names = FALSE, stringsAsFactors = FALSE)
  xla <- x$xla
  c(
    sprintf("<kerasmesh_layout_cost> model \"%s\", %s", s$model,
            cost_distribution_label(x)),
    sprintf("Mesh:  %s", mesh_summary(x$mesh)),
    sprintf("Step:  batch %d split over \"%s\" (%s), loss %s, %s",
            x$batch_size, x$batch_dim_name, ways_text(s$batch_ways), x$loss,
            s$optimizer %||% "no optimizer"),
    format_cost_levers(x),
    "Memory per device:",
    format_table(memory, right = "per device"),
    sprintf("  XLA's figures: arguments %s, temporaries %s,",
            format_bytes(xla[["argument"]]), format_bytes(xla[["temp"]])),
    sprintf("  outputs %s (%s of them reuse arguments), total %s",
            format_bytes(xla[["output"]]), format_bytes(xla[["alias"]]),
            format_bytes(xla[["total"]])),
    if (!is.null(limit)) format_fits(m[["total"]], limit),
    format_collectives(x$collectives),
    sprintf("Compiled in %.2f s: Keras %s, JAX %s, jaxlib %s, XLA %s",
            x$compile_seconds, x$versions$keras, x$versions$jax,
            x$versions$jaxlib, x$versions$xla),
    if (length(x$warnings)) {
      sprintf("Plan: %s (see check_layout())",
              count_text(length(x$warnings), "warning"))
    }
  )
}

#' @export
print.kerasmesh_layout_cost <- function(x, ...) {
  writeLines(format(x, ...))
  invisible(x)
}

#' @export
format.kerasmesh_layout_comparison <- function(x, ...) {
  limit <- attr(x, "device_memory")
  shown <- data.frame(layout = x$layout, stringsAsFactors = FALSE)
  for (col in c("weights", "optimizer", "activations", "total", "traffic")) {
    shown[[col]] <- format_bytes(x[[col]])
  }
  if (!is.null(x$fits)) {
    shown$fits <- ifelse(x$fits, "yes", "no")
  }
  traffic <- attr(x, "traffic")
  per_axis <- vapply(x$layout, function(l) {
    t <- traffic[traffic$layout == l, , drop = FALSE]
    if (nrow(t) == 0) {
      return("none")
    }
    by_axis <- tapply(t$bytes, t$axes, sum)
    paste(sprintf("%s %s", ifelse(names(by_axis) == "", "(no axis)",
                                  names(by_axis)),
                  format_bytes(by_axis)), collapse = ", ")
  }, "")
  c(
    sprintf("<kerasmesh_layout_comparison> %s, model \"%s\", batch %d",
            count_text(nrow(x), "layout"), attr(x, "model"),
            attr(x, "batch_size")),
    "Memory per device and traffic per device per step:",
    format_table(shown, right = c("weights", "optimizer", "activations",
                                  "total", "traffic")),
    if (!is.null(limit)) {
      sprintf("Device memory: %s", attr(limit, "label"))
    },
    "Traffic by mesh axis:",
    paste0("  ", x$layout, " (", x$mesh, "): ", per_axis)
  )
}

#' @export
print.kerasmesh_layout_comparison <- function(x, ...) {
  writeLines(format(x, ...))
  invisible(x)
}

#' @export
as.data.frame.kerasmesh_layout_comparison <- function(x, ...) {
  for (a in c("traffic", "costs", "device_memory", "model", "batch_size")) {
    attr(x, a) <- NULL
  }
  class(x) <- "data.frame"
  x
}

# -- formatting ---------------------------------------------------------------

cost_distribution_label <- function(x) {
  if (identical(x$distribution, "data_parallel")) "data parallel" else
    "model parallel"
}

format_fits <- function(total, limit) {
  sprintf("Device memory %s: %s (%s of %s)", attr(limit, "label"),
          if (total <= limit) "fits" else "does not fit",
          format_bytes(total), attr(limit, "label"))
}

format_collectives <- function(collectives) {
  if (nrow(collectives) == 0) {
    return("Collectives per step: none")
  }
  table <- data.frame(
    kind = collectives$kind,
    "mesh axes" = ifelse(collectives$axes == "", "(none)",
                         collectives$axes),
    count = as.character(collectives$count),
    "bytes per device" = format_bytes(collectives$bytes),
    check.names = FALSE, stringsAsFactors = FALSE
  )
  c(sprintf("Collectives per step: %s, %s per device",
            format_whole(sum(collectives$count)),
            format_bytes(sum(collectives$bytes))),
    format_table(table, right = c("count", "bytes per device")))
}

# A device memory: NULL, or bytes with a "label" attribute.
parse_limit <- function(x, arg = rlang::caller_arg(x),
                        call = rlang::caller_env()) {
  label <- if (is.character(x)) trimws(x)
  limit <- parse_bytes(x, arg = arg, call = call)
  if (!is.null(limit)) {
    attr(limit, "label") <- label %||% format_bytes(limit)
  }
  limit
}

# The step's levers, when set: micro-batches and rematerialization.
format_cost_levers <- function(x) {
  k <- x$accumulation_steps %||% 1L
  c(
    if (k > 1) {
      sprintf("       %d micro-batches of %d per update, gradients accumulated",
              k, x$micro_batch_size)
    },
    if (!identical(x$remat %||% "none", "none")) {
      sprintf("       remat \"%s\" per block: recomputes %s per device",
              x$remat, format_flops(x$recompute_flops))
    }
  )
}

# Floating-point operations with a metric prefix: "26.0 MFLOP".
format_flops <- function(x) {
  units <- c("FLOP", "kFLOP", "MFLOP", "GFLOP", "TFLOP", "PFLOP")
  i <- max(1, min(length(units), floor(log10(max(x, 1)) / 3) + 1))
  sprintf("%.1f %s", x / 1000^(i - 1), units[i])
}
