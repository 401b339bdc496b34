# The result of search_layout(): printing, summary, plot.

# layout_map(mesh, "key" = c(NA, "model"), ...) as R code.
search_code <- function(rules) {
  if (length(rules) == 0) {
    return("layout_map(mesh) # data parallel: no rule splits a variable")
  }
  lines <- vapply(seq_along(rules), function(i) {
    axes <- rules[[i]]
    value <- if (length(axes) == 1) {
      if (is.na(axes)) "NA" else encodeString(axes, quote = '"')
    } else {
      paste0("c(", paste(ifelse(is.na(axes), "NA",
                                encodeString(axes, quote = '"')),
                         collapse = ", "), ")")
    }
    sprintf("  %s = %s%s", encodeString(names(rules)[i], quote = '"'),
            value, if (i < length(rules)) "," else "")
  }, "")
  c("layout_map(", "  mesh,", lines, ")")
}

#' @export
format.kerasmesh_layout_search <- function(x, ...) {
  figure <- function(f) {
    if (is.null(f$memory) || is.null(f$traffic)) {
      return("-") # no figure: the search found nothing by then
    }
    sprintf("%s, %s", bytes_text(f$memory), bytes_text(f$traffic))
  }
  found <- search_found(x)
  budget <- if (is.null(x$budget)) "none" else bytes_text(x$budget)
  c(
    sprintf("<kerasmesh_layout_search> %s, %d costed of %s layouts (%s)",
            x$objective, nrow(x$candidates), format_count(x$space_size),
            x$method),
    sprintf("Found in %.1f s, %d compiles; memory budget %s per device.",
            x$seconds, as.integer(x$compiles), budget),
    if (isTRUE(x$pruned > 0)) {
      sprintf("%d more layouts not compiled: their weights alone break it.",
              as.integer(x$pruned))
    },
    if (!is.null(x$stopped)) "The time ran out: the best layout by then.",
    if (isFALSE(x$verified)) {
      "Not verified: XLA had no time left to compile it at full depth."
    },
    "",
    format_search_config(x),
    "",
    "Per device (memory, traffic per step):",
    sprintf("  found          %s (%s)", figure(found),
            if (isFALSE(x$verified)) "the search's own figure" else
              "verified by XLA"),
    if (!is.null(x$data_parallel)) {
      sprintf("  data parallel  %s", figure(x$data_parallel))
    },
    if (!is.null(x$start)) sprintf("  start          %s", figure(x$start)),
    if (length(x$blocks)) {
      sprintf("  (%s extrapolated from %s blocks)",
              if (is.null(x$cost)) "all" else "the others",
              paste(unlist(x$depths), collapse = " and "))
    },
    if (length(x$blocks) && !is.null(x$linearity)) {
      sprintf("Extrapolation off by %.1f%% (memory), %.1f%% (traffic).",
              100 * x$linearity$memory, 100 * x$linearity$traffic)
    },
    if (!is.null(x$memory)) format_search_memory(x$memory),
    if (!is.null(x$time)) c("", format_cost_time(x$time, x$topology)),
    if (!is.null(x$cost)) format_compile_notes(x$cost),
    format_top_traffic(x$cost),
    "",
    search_reproduce_code(x)
  )
}

# The mesh (with its device order) and the levers found.
format_search_config <- function(x) {
  shape <- mesh_shape(x$mesh)
  mesh <- paste(sprintf("%s = %d", names(shape), as.integer(shape)),
                collapse = " x ")
  order <- x$device_order
  where <- if (is.null(order)) "" else if (order == "model") {
    ", model axis fastest over device ids"
  } else {
    ", data axis fastest over device ids"
  }
  steps <- x$accumulation_steps %||% 1L
  c(
    sprintf("Mesh: %s%s.", mesh, where),
    sprintf("Levers: remat %s, %s%s.", remat_label(x$remat),
            cli::pluralize("{steps} micro-batch{?es}"),
            if (steps > 1) {
              sprintf(" of %s samples", format_whole(x$micro_batch_size))
            } else {
              ""
            })
  )
}

format_search_memory <- function(memory) {
  parts <- memory[setdiff(names(memory), "total")]
  parts <- parts[parts > 0]
  c("Memory per device (XLA):",
    paste0("  ", paste(sprintf("%s %s", names(parts), bytes_text(parts)),
                       collapse = ", ")))
}

# The found layout's memory and traffic: its verified cost's, or, when the
# time ran out before the full compile, the search's own figures.
search_found <- function(x) {
  if (is.null(x$cost)) {
    return(list(memory = x$predicted$memory, traffic = x$predicted$traffic))
  }
  list(memory = x$cost$need,
       traffic = sum(x$cost$collectives$bytes))
}

# The found layout's variables with the most traffic, when the verified
# cost could attribute any (see summary.kerasmesh_layout_cost()).
format_top_traffic <- function(cost, n = 3) {
  if (is.null(cost)) {
    return(character())
  }
  top <- utils::head(summary(cost, by = "variable"), n)
  if (nrow(top) == 0) {
    return(character())
  }
  c("", "Most traffic by variable (per device per step):",
    sprintf("  %s  %s (%.0f%%)", format(top$variable), bytes_text(top$bytes),
            100 * top$share))
}

#' @export
print.kerasmesh_layout_search <- function(x, ...) {
  writeLines(format(x, ...))
  invisible(x)
}

#' @export
summary.kerasmesh_layout_search <- function(object, ...) {
  rows <- lapply(object$classes, function(cl) {
    alt <- cl$alternatives
    best <- if (length(alt)) {
      which.min(vapply(alt, function(a) a$traffic, 1))
    }
    data.frame(
      class = cl$template, variables = as.integer(cl$count),
      axes = format_axes(axes_from_python(cl$axes)),
      fixed = isTRUE(cl$fixed), alternatives = length(alt),
      best_alternative = if (is.null(best)) NA_character_ else
        format_axes(axes_from_python(alt[[best]]$axes)),
      alternative_memory = if (is.null(best)) NA_real_ else
        alt[[best]]$memory,
      alternative_traffic = if (is.null(best)) NA_real_ else
        alt[[best]]$traffic,
      stringsAsFactors = FALSE
    )
  })
  do.call(rbind, rows)
}
