# Drawing a layout plan: memory per device under the plan beside fully
# replicated, as stacked bars in native units (bytes).

#' Draw the memory each device needs
#'
#' Draws what one device holds under the plan next to what it would hold
#' with every variable fully replicated, as two horizontal bars stacked by
#' layer, by variable or by part (weights, gradients, optimizer slots). A
#' device's memory, when given, is drawn as a dashed line, and the
#' subtitle says whether the plan fits it: a plan fits when its total per
#' device (weights, gradients and optimizer slots) is at most `memory`.
#'
#' Per-variable optimizer bytes assume the optimizer's slots (Adam's two
#' moments) are placed like their variables, as Keras places them; any
#' other optimizer variables (the iteration counter) make a segment of
#' their own. The totals are the plan's, as [summary()] gives them.
#'
#' @param x A [layout_plan()].
#' @param path A variable path: draw that variable's planned
#'   [sharding_picture()] instead.
#' @param ... Not used.
#' @param by Stack by `"layer"` (paths without their last part, and without
#'   the model's name; with more layers than `n`, layers that differ
#'   only in their numbers, such as the blocks of a transformer, are one
#'   group: `decoder_block_*/attention/query`), `"rule"` (the layout rule
#'   that places each variable), `"variable"` or `"part"` (weights,
#'   gradients, optimizer slots; `"kind"` is a deprecated name for it).
#' @param what `"total"` counts weights, gradients of trainable variables
#'   and optimizer slots (those the plan counted: see the `optimizer`
#'   argument of [layout_plan()]); `"weights"` counts weights alone.
#' @param memory The memory of one device, drawn as a line: bytes, or a
#'   string such as `"80GB"`, `"16 GiB"` or `"512MB"` (kB, MB, GB, TB are
#'   powers of 1000; KiB, MiB, GiB, TiB powers of 1024). `NULL` for none.
#' @param n Segments shown before the smallest groups are merged into one.
#' @param main A title; `NULL` for one naming the model.
#' @param limit,max_groups Deprecated: use `memory` and `n`.
#' @return `x`, invisibly.
#' @export
#' @examplesIf keras_available()
#' simulate_devices(8)
#' mesh <- device_mesh(c(data = 2, model = 4))
#' lm <- layout_map(mesh, ".*dense.*kernel" = c(NA, "model"),
#'                  ".*dense.*bias" = "model")
#' library(reticulate, include.only = "import")
#' keras <- import("keras")
#' build <- function() {
#'   keras$Sequential(list(
#'     keras$Input(shape = list(16000L)),
#'     keras$layers$Dense(64000L, activation = "relu"),
#'     keras$layers$Dense(8000L, activation = "sigmoid")
#'   ))
#' }
#' plan <- layout_plan(build, lm, optimizer = "adam")
#' plot(plan, memory = "16GB")
#' plot(plan, by = "part")
plot.kerasmesh_layout_plan <- function(x, path = NULL, ...,
                                       by = c("layer", "rule", "variable",
                                              "part"),
                                       what = c("total", "weights"),
                                       memory = NULL, n = 10, main = NULL,
                                       limit = deprecated(),
                                       max_groups = deprecated()) {
  check_dots_none()
  # With `path`, one variable's shards are drawn: nothing is grouped.
  grouping <- c(by = !missing(by), what = !missing(what),
                memory = !is.null(memory) || !missing(limit),
                n = !missing(n) || !missing(max_groups))
  memory_arg <- typed_name("memory", "limit")
  memory <- renamed_arg("memory", "limit")
  n_arg <- typed_name("n", "max_groups")
  n <- renamed_arg("n", "max_groups")
  check_plan_object(x)
  check_title(main)
  by <- renamed_value(by, "kind", "part", arg = "by")
  by <- check_choice(by, c("layer", "rule", "variable", "part"))
  what <- check_choice(what, c("total", "weights"))
  memory <- check_bytes(memory, arg = memory_arg)
  n <- check_whole(n, arg = n_arg)
  if (!is.null(path) && any(grouping)) {
    kerasmesh_abort(
      c("{.arg path} draws one variable's shards: {.arg {names(grouping)[
         grouping]}} {?is/are} not taken with it.",
        i = "Leave out {.arg path} to plot the plan's memory."),
      kind = kinds$argument
    )
  }
  check_unedited(x)
  with_edits_named(x, {
    if (!is.null(path)) {
      plot(sharding_picture(x, path = path), main = main)
      return(invisible(x))
    }
    summary <- attr(x, "summary")
    parts <- plan_memory_parts(x, by, what, n)
    parts <- lump_groups(parts, n)
    if (nrow(parts) == 0) {
      # A model without variables (only Flatten, say): one empty segment.
      parts <- data.frame(group = "no variables", device = 0, replicated = 0)
    }
    main <- main %||% sprintf("Memory per device: model \"%s\"", summary$model)
    draw_memory_bars(parts, summary, attr(x, "mesh"), what, memory, main)
    invisible(x)
  })
}

# What a plan's picture shows, and with `memory` whether the plan and the
# fully replicated model fit a device: by the plan's `need`, as every cost,
# comparison and search judges fit, whatever the bars show.
plan_plot_subtitle <- function(summary, mesh, what, memory) {
  contents <- if (what == "weights") {
    "Weights"
  } else if (is.null(summary$optimizer)) {
    "Weights and gradients (no optimizer counted)"
  } else {
    sprintf("Weights, gradients and %s slots", summary$optimizer)
  }
  subtitle <- sprintf("%s on %s", contents, mesh_phrase(mesh))
  if (is.null(memory)) {
    return(subtitle)
  }
  need <- c(device = summary$need, replicated = summary$replicated_total)
  fits <- ifelse(fits_memory(need, memory), "fits", "does not fit")
  c(subtitle, sprintf(
    "Device memory %s: the plan's %s %s; fully replicated, %s %s.",
    attr(memory, "label"), bytes_text(need[["device"]]), fits[["device"]],
    bytes_text(need[["replicated"]]), fits[["replicated"]]
  ))
}

# One row per group: bytes per device under the plan and replicated.
plan_memory_parts <- function(x, by, what, n = Inf) {
  s <- attr(x, "summary")
  optimizer <- if (is.null(s$optimizer)) "optimizer" else s$optimizer
  total <- what == "total"
  slots <- if (total && !is.null(s$optimizer)) s$slots %||% 0 else 0
  train <- if (total) as.numeric(x$trainable) else rep(0, nrow(x))
  bytes <- list(
    device = cbind(x$device_bytes, x$device_bytes * train,
                   x$device_bytes * train * slots),
    replicated = cbind(x$bytes, x$bytes * train, x$bytes * train * slots)
  )
  other <- if (total && !is.null(s$optimizer)) {
    c(device = s$device_optimizer - sum(bytes$device[, 3]),
      replicated = s$replicated_optimizer - sum(bytes$replicated[, 3]))
  } else {
    c(device = 0, replicated = 0)
  }
  other <- pmax(other, 0)
  if (by == "part") {
    parts <- data.frame(
      group = c("weights", "gradients", paste(optimizer, "slots")),
      device = colSums(bytes$device), replicated = colSums(bytes$replicated),
      stringsAsFactors = FALSE
    )
    parts$device[3] <- parts$device[3] + other[["device"]]
    parts$replicated[3] <- parts$replicated[3] + other[["replicated"]]
    return(parts[parts$replicated > 0 | seq_len(3) == 1, , drop = FALSE])
  }
  group <- memory_group(x, s$model, by, n)
  parts <- data.frame(
    group = levels(group),
    device = as.numeric(tapply(rowSums(bytes$device), group, sum)),
    replicated = as.numeric(tapply(rowSums(bytes$replicated), group, sum)),
    stringsAsFactors = FALSE
  )
  # Optimizer variables that are not slots (the iteration counter) get a
  # segment only when it would be visible.
  if (other[["replicated"]] > 1e-3 * sum(bytes$replicated)) {
    parts <- rbind(parts, data.frame(
      group = paste(optimizer, "(other variables)"),
      device = other[["device"]], replicated = other[["replicated"]],
      stringsAsFactors = FALSE
    ))
  }
  parts
}

# The group of each variable, as a factor in order of appearance: its
# layer (paths below the model's name; layers numbered alike as one when
# there are more than `n`), its rule, or the variable itself.
memory_group <- function(x, model, by, n) {
  paths <- x$path
  prefix <- paste0(model, "/")
  if (length(paths) && all(startsWith(paths, prefix))) {
    paths <- substring(paths, nchar(prefix) + 1)
  }
  group <- if (by == "layer") {
    ifelse(grepl("/", paths, fixed = TRUE), sub("/[^/]*$", "", paths), paths)
  } else if (by == "rule") {
    ifelse(is.na(x$rule), "(no rule)", x$rule)
  } else {
    paths
  }
  if (by == "layer" && length(unique(group)) > n) {
    group <- gsub("[0-9]+", "*", group)
  }
  factor(group, levels = unique(group))
}

# The largest `n - 1` groups, in their order, and the rest as one.
lump_groups <- function(parts, n) {
  if (nrow(parts) <= n) {
    return(parts)
  }
  keep <- sort(utils::head(order(parts$replicated, decreasing = TRUE),
                           n - 1))
  rest <- parts[-keep, , drop = FALSE]
  rbind(parts[keep, , drop = FALSE], data.frame(
    group = sprintf("%d others", nrow(rest)),
    device = sum(rest$device), replicated = sum(rest$replicated),
    stringsAsFactors = FALSE
  ))
}

draw_memory_bars <- function(parts, summary, mesh, what, memory, main) {
  totals <- if (what == "weights") {
    c(device = summary$device_weights,
      replicated = summary$replicated_weights)
  } else {
    c(device = summary$device_total, replicated = summary$replicated_total)
  }
  subtitle <- plan_plot_subtitle(summary, mesh, what, memory)
  plot_page(main, subtitle)
  fills <- group_fills(nrow(parts))
  bar_names <- c("this plan\n(per device)", "fully\nreplicated")
  legend_fs <- 8
  legend_w <- min(
    0.4 * plot_width(),
    max(text_size(parts$group, legend_fs)[, "w"]) + 0.45
  )
  name_w <- max(text_size(bar_names, 9)[, "w"]) + 0.15
  lay <- grid::grid.layout(
    1, 3, widths = grid::unit(c(name_w, 1, legend_w),
                              c("inches", "null", "inches"))
  )
  grid::pushViewport(grid::viewport(layout = lay))
  draw_bars(parts, totals, memory, fills, bar_names)
  # The legend, in inches so swatches and labels line up.
  grid::pushViewport(grid::viewport(layout.pos.col = 3))
  draw_legend(parts, fills, legend_fs)
  grid::popViewport(0)
}

# The two stacked bars (this plan per device, fully replicated) in a
# viewport whose x scale is bytes (native units), with 8% of room to the
# right of the longest bar or the memory; ticks, the memory and totals. Draws
# in column 2 of the current layout and leaves the viewport as it found it.
draw_bars <- function(parts, totals, memory, fills, bar_names) {
  xmax <- max(c(totals, memory)) * 1.08
  if (!is.finite(xmax) || xmax <= 0) {
    xmax <- 1
  }
  bytes <- function(b) grid::unit(b, "native")
  grid::pushViewport(grid::viewport(layout.pos.col = 2))
  grid::pushViewport(grid::viewport(
    y = grid::unit(2, "lines"), just = "bottom",
    height = grid::unit(1, "npc") - grid::unit(3.2, "lines"),
    xscale = c(0, xmax)
  ))
  ticks <- pretty(c(0, xmax / 1.08), n = 4)
  ticks <- ticks[ticks <= xmax]
  grid::grid.segments(bytes(ticks), 0, bytes(ticks), 1,
                      gp = grid::gpar(col = "grey85"))
  grid::grid.text(bytes_text(ticks), x = bytes(ticks),
                  y = grid::unit(-1, "lines"),
                  gp = grid::gpar(fontsize = 8, col = "grey30"))
  if (!is.null(memory)) {
    grid::grid.segments(bytes(memory), 0, bytes(memory), 0.95,
                        gp = grid::gpar(lty = "dashed", lwd = 1.6))
    grid::grid.text(paste("limit", attr(memory, "label")),
                    x = bytes(memory), y = 0.97, just = c("centre", "bottom"),
                    gp = grid::gpar(fontsize = 8.5, fontface = "bold"))
  }
  bar_y <- c(0.7, 0.3)
  for (b in 1:2) {
    values <- if (b == 1) parts$device else parts$replicated
    draw_stacked_bar(values, parts$group, bar_y[b], totals[[b]], fills,
                     bar_names[b])
  }
  grid::grid.lines(c(0, 0), c(0, 1), gp = grid::gpar(col = "grey40"))
  grid::popViewport(2)
}

# One stacked bar at height `y` (npc) in a viewport whose x scale is
# bytes: a segment per group, named where the name fits, the total on a
# white ground after it and the bar's name to the left.
draw_stacked_bar <- function(values, groups, y, total, fills, name) {
  bytes <- function(b) grid::unit(b, "native")
  ends <- cumsum(values)
  starts <- c(0, utils::head(ends, -1))
  grid::grid.rect(x = bytes(starts), y = y, width = bytes(ends - starts),
                  height = 0.28, just = c("left", "centre"),
                  gp = grid::gpar(fill = fills, col = "grey15", lwd = 0.7))
  widths_in <- grid::convertWidth(bytes(ends - starts), "inches", TRUE)
  for (g in seq_along(values)) {
    size <- text_size(groups[g], 7.5)
    if (widths_in[g] > size[1, "w"] + 0.08) {
      grid::grid.text(groups[g], x = bytes((starts[g] + ends[g]) / 2),
                      y = y, gp = grid::gpar(fontsize = 7.5))
    }
  }
  label <- grid::textGrob(
    bytes_text(total),
    x = bytes(max(ends, 0)) + grid::unit(0.3, "lines"),
    y = y, just = "left",
    gp = grid::gpar(fontsize = 8.5, fontface = "bold")
  )
  grid::grid.rect(x = bytes(max(ends, 0)) + grid::unit(0.15, "lines"),
                  y = y, just = "left",
                  width = grid::grobWidth(label) + grid::unit(0.3, "lines"),
                  height = grid::grobHeight(label) + grid::unit(0.3, "lines"),
                  gp = grid::gpar(fill = "white", col = NA))
  grid::grid.draw(label)
  grid::grid.text(name, x = grid::unit(-0.4, "lines"), y = y,
                  just = "right", gp = grid::gpar(fontsize = 9))
}

# The legend: a swatch and a label per group, in inches.
draw_legend <- function(parts, fills, legend_fs) {
  n <- nrow(parts)
  line <- text_size("Xg", legend_fs)[1, "h"] * 1.5
  step <- min(line, (plot_height() - 0.2) / max(n, 1))
  y <- grid::unit(plot_height() - 0.2 - step * (seq_len(n) - 1), "inches")
  grid::grid.rect(x = grid::unit(0.15, "inches"), y = y,
                  width = grid::unit(0.18, "inches"),
                  height = grid::unit(0.75 * step, "inches"),
                  just = c("left", "centre"),
                  gp = grid::gpar(fill = fills, col = "grey15", lwd = 0.7))
  grid::grid.text(parts$group, x = grid::unit(0.4, "inches"), y = y,
                  just = "left", gp = grid::gpar(fontsize = legend_fs))
}
