# The result of search_layout(): printing, summary, plot.

# layout_map(mesh, "key" = c(NA, "model"), ...) as R code.
search_code <- function(rules) {
  if (length(rules) == 0) {
    return("layout_map(mesh) # no rule: every variable whole on every device")
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
  check_dots_none()
  check_search_object(x)
  check_unedited(x)
  with_edits_named(x, {
    c(
      format_search_header(x),
      "",
      format_search_config(x),
      "",
      format_search_figures(x),
      format_search_why(x),
      if (!is.null(x$memory)) format_search_memory(x$memory),
      if (!is.null(x$time)) {
        c("", format_cost_time(x$time, x$topology, x$cost$compiled_for))
      },
      if (!is.null(x$cost)) format_compile_notes(x$cost),
      format_top_traffic(x$cost),
      "",
      search_reproduce_code(x)
    )
  })
}

# What was searched, how long it took, and whether the answer is partial.
format_search_header <- function(x) {
  budget <- if (is.null(x$budget)) "none" else bytes_text(x$budget)
  c(
    sprintf(
      "<kerasmesh_layout_search> %s, %s predicted of %s %s (%s)",
      x$objective, count_text(nrow(x$candidates), "configuration"),
      format_astronomical(x$space_size),
      if (isTRUE(x$space_size == 1)) "layout" else "layouts", x$method
    ),
    sprintf("Found in %.1f s, %s%s; memory budget %s per device.",
            x$seconds, count_text(as.integer(x$compiles), "compile"),
            format_cache_hits(x$cache), budget),
    if (isTRUE(x$pruned > 0)) {
      sprintf("%d more layouts not compiled: their weights alone break it.",
              as.integer(x$pruned))
    },
    if (NROW(x$unprofiled) > 0) {
      sprintf(paste("Partial: the time ran out before %s of the profile;",
                    "more time may find another configuration."),
              count_text(nrow(x$unprofiled), "part"))
    } else if (!is.null(x$stopped)) {
      "The time ran out: the best configuration by then."
    },
    if (isFALSE(x$verified)) {
      "Not verified: XLA had no time left to compile it at full depth."
    },
    if (!is.null(x$cache$note)) sprintf("Cache: %s.", x$cache$note)
  )
}

# The found configuration's memory, traffic (and time) per device, beside
# the search's own prediction, data parallel's and the start's.
format_search_figures <- function(x) {
  figure <- function(f) {
    if (is.null(f$memory) || is.null(f$traffic)) {
      return("-") # no figure: the search found nothing by then
    }
    sprintf("%s, %s", bytes_text(f$memory), bytes_text(f$traffic))
  }
  timed <- function(f) {
    if (is.null(f$time)) {
      figure(f)
    } else {
      paste0(figure(f), ", ", format_seconds(f$time))
    }
  }
  c(
    sprintf("Per device (memory, traffic%s per global batch):",
            if (identical(x$objective, "time")) ", time" else ""),
    sprintf("  found          %s (%s)", timed(search_found(x)),
            if (isFALSE(x$verified)) "the search's own figure" else
              "verified by XLA"),
    if (!isFALSE(x$verified) && !is.null(x$predicted)) {
      sprintf("  predicted      %s (the search's own)", timed(x$predicted))
    },
    if (!is.null(x$data_parallel)) {
      sprintf("  data parallel  %s", timed(x$data_parallel))
    },
    if (!is.null(x$start)) sprintf("  start          %s", timed(x$start)),
    if (length(x$blocks)) {
      sprintf("  (%s extrapolated from %s blocks)",
              if (is.null(x$cost)) "all" else "the others",
              paste(unlist(x$depths), collapse = " and "))
    },
    if (length(x$blocks) && !is.null(x$linearity)) {
      sprintf("Extrapolation off by %.1f%% (memory), %.1f%% (traffic).",
              100 * x$linearity$memory, 100 * x$linearity$traffic)
    }
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

# ", 12 read from the cache" when the cache served any figures.
format_cache_hits <- function(cache) {
  hits <- as.integer(cache$hits %||% 0L)
  if (hits == 0) "" else
    paste0(", ", count_text(hits, "figure"), " read from the cache")
}

# What binds the found configuration, and per lever its best rival.
format_search_why <- function(x) {
  why <- x$why
  if (is.null(why)) {
    return(character())
  }
  unit <- if (identical(x$objective, "time")) "the time" else "the traffic"
  rival <- function(r, what) {
    sprintf("  %-15s %s: %s, %s%s", what, search_lever_text(r),
            if (is.na(r$ratio)) "-" else sprintf("%.3gx %s", r$ratio, unit),
            bytes_text(r$memory), if (isTRUE(r$fits)) "" else
              " (over budget)")
  }
  levers <- why$levers
  c("",
    if (identical(why$binds, "memory")) {
      c("Why this one: memory binds; faster, over budget:",
        rival(why$faster, "fastest"))
    } else {
      sprintf("Why this one: the least %s that fits.",
              if (identical(x$objective, "time")) "time" else "traffic")
    },
    if (nrow(levers)) "Best with one lever changed:",
    vapply(seq_len(nrow(levers)), function(i) {
      rival(levers[i, ], search_lever_names[[levers$lever[[i]]]])
    }, ""))
}

search_lever_names <- c(mesh = "mesh", device_order = "device order",
                        layout = "layout", remat = "remat",
                        accumulation_steps = "micro-batches")

# A row of the candidates table in words: mesh, order, layout, levers.
search_lever_text <- function(r) {
  order <- ""
  if (!is.na(r$device_order)) {
    order <- sprintf(" (%s fastest)", r$device_order)
  }
  sprintf("%s%s, %s, remat %s, %d micro-batch%s", r$mesh, order, r$layout,
          r$remat, r$accumulation_steps,
          if (r$accumulation_steps == 1) "" else "es")
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
    return(list(memory = x$predicted$memory, traffic = x$predicted$traffic,
                time = x$predicted$time))
  }
  list(memory = x$cost$need,
       traffic = sum(x$cost$collectives$bytes) * x$accumulation_steps,
       time = x$time$total)
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
  check_dots_none()
  check_search_object(object, prefix = "object")
  check_unedited(object, prefix = "object")
  with_edits_named(object, {
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
  }, prefix = "object")
}
