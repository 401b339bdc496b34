# The console renderings of layout_cost() and compare_layouts().

#' @export
format.kerasmesh_layout_cost <- function(x, ..., memory = NULL,
                                         device_memory = deprecated()) {
  check_dots_none()
  memory_arg <- typed_name("memory", "device_memory")
  memory <- renamed_arg("memory", "device_memory")
  memory <- check_bytes(memory, arg = memory_arg)
  check_cost_object(x)
  check_unedited(x)
  with_edits_named(x, {
    m <- x$memory
    s <- x$plan
    labels <- c(weights = "weights", optimizer = "optimizer state",
                inputs = "batch (inputs, targets)",
                activations = "gradients, activations",
                outputs = "other outputs", total = "total")
    parts <- data.frame(" " = labels, "per device" = bytes_text(m[names(
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
      format_table(parts, right = "per device"),
      sprintf("  XLA's figures: arguments %s, temporaries %s,",
              bytes_text(xla[["argument"]]), bytes_text(xla[["temp"]])),
      sprintf("  outputs %s (%s of them reuse arguments), total %s",
              bytes_text(xla[["output"]]), bytes_text(xla[["alias"]]),
              bytes_text(xla[["total"]])),
      if (!is.null(memory)) format_fits(x$need, memory),
      format_collectives(x$collectives),
      format_cost_time(x$time, x$topology, x$compiled_for),
      format_compile_notes(x),
      sprintf("Compiled in %.2f s: Keras %s, JAX %s, jaxlib %s, XLA %s",
              x$compile_seconds, x$versions$keras, x$versions$jax,
              x$versions$jaxlib, compiler_text(x)),
      if (length(x$warnings)) {
        sprintf("Plan: %s (see check_layout())",
                count_text(length(x$warnings), "warning"))
      }
    )
  })
}

#' @export
print.kerasmesh_layout_cost <- function(x, ...) {
  writeLines(format(x, ...))
  invisible(x)
}

#' @export
format.kerasmesh_layout_comparison <- function(x, ..., memory = NULL,
                                               device_memory = deprecated()) {
  check_dots_none()
  memory_arg <- typed_name("memory", "device_memory")
  memory <- renamed_arg("memory", "device_memory")
  memory <- check_bytes(memory, arg = memory_arg)
  check_unedited(x)
  with_edits_named(x, {
    if (!is.null(memory)) {
      x <- with_memory(x, memory)
    }
    check_comparison_object(x)
    memory <- attr(x, "memory")
    shown <- data.frame(layout = x$layout, stringsAsFactors = FALSE)
    for (col in c("weights", "optimizer", "activations", "total", "traffic")) {
      shown[[col]] <- bytes_text(x[[col]])
    }
    if (!is.null(x$fits)) {
      shown$fits <- ifelse(x$fits, "yes", "no")
    }
    if (!is.null(x$time)) {
      shown$time <- format_seconds(x$time)
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
                    bytes_text(by_axis)), collapse = ", ")
    }, "")
    c(
      sprintf("<kerasmesh_layout_comparison> %s, model \"%s\", batch %d",
              count_text(nrow(x), "layout"), attr(x, "model"),
              attr(x, "batch_size")),
      "Memory per device and traffic per device per step:",
      format_table(shown, right = c("weights", "optimizer", "activations",
                                    "total", "traffic", "time")),
      if (!is.null(memory)) {
        sprintf("Device memory: %s", attr(memory, "label"))
      },
      if (nrow(x) > 0) {
        c("Traffic by mesh axis:",
          paste0("  ", x$layout, " (", x$mesh, "): ", per_axis))
      }
    )
  })
}

#' @export
print.kerasmesh_layout_comparison <- function(x, ...) {
  writeLines(format(x, ...))
  invisible(x)
}

# A comparison's rows are a comparison (rows_as_made()).
#' @export
`[.kerasmesh_layout_comparison` <- function(x, ...) {
  check_subset_names()
  check_unedited(x)
  rows_as_made(x, NextMethod(), key = "layout")
}


# -- formatting ---------------------------------------------------------------

cost_distribution_label <- function(x) {
  if (identical(x$distribution, "data_parallel")) "data parallel" else
    "model parallel"
}

# "Device memory 16GB: fits (1.2 GB of 16GB)": `need` is what decides.
format_fits <- function(need, memory) {
  sprintf("Device memory %s: %s (%s of %s)", attr(memory, "label"),
          if (fits_memory(need, memory)) "fits" else "does not fit",
          bytes_text(need), attr(memory, "label"))
}

# A comparison judged against another device memory.
with_memory <- function(x, memory) {
  attr(x, "memory") <- memory
  x$fits <- fits_memory(x$need, memory)
  stamp_fields(x)
}

# XLA's compiler that compiled the step: the host's backend ("cpu"), or
# the GPU compiler that compiled for a topology without a GPU ("gpu"; the
# line "compiled for" says which GPU).
compiler_text <- function(x) {
  if (identical(x$compiled_for$kind, "gpu-deviceless")) {
    "gpu"
  } else {
    x$versions$xla
  }
}

format_collectives <- function(collectives) {
  if (nrow(collectives) == 0) {
    return("Collectives per step: none")
  }
  table <- data.frame(
    collective = collectives$collective,
    "mesh axes" = ifelse(collectives$axes == "", "(none)",
                         collectives$axes),
    count = as.character(collectives$count),
    "bytes per device" = bytes_text(collectives$bytes),
    check.names = FALSE, stringsAsFactors = FALSE
  )
  c(sprintf("Collectives per step: %s, %s per device",
            format_whole(sum(collectives$count)),
            bytes_text(sum(collectives$bytes))),
    format_table(table, right = c("count", "bytes per device")))
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
      sprintf(if (length(x$remat) > 1) {
        "       remat per block %s: recomputes %s per device"
      } else {
        "       remat %s per block: recomputes %s per device"
      }, remat_label(x$remat), format_flops(x$recompute_flops))
    }
  )
}

# Floating-point operations with a metric prefix: "26 MFLOP".
format_flops <- function(x) {
  sub("B$", "FLOP", bytes_text(x))
}
