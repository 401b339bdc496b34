#' Draw a device mesh
#'
#' Draws the mesh's devices as a grid of tiles, each labelled with its
#' device name: rows along the first axis and columns along the second,
#' each axis labelled with its name, size and indices. A 1-D mesh is one
#' row; a mesh of 3 or more axes is drawn as panels, one for each index of
#' the axes after the second (`"stage = 0"`). Tiles are shaded by their
#' column, so the devices that share an index along the second axis share a
#' shade; the shades differ in lightness, so they stay apart in greyscale.
#' Drawn with \pkg{grid}.
#'
#' @param x A [device_mesh()].
#' @param ... Not used.
#' @param main A title; `NULL` for `"Device mesh"`.
#' @return `x`, invisibly.
#' @seealso [sharding_picture()] for the blocks of one variable on the
#'   mesh, [plot.kerasmesh_layout_plan()] for memory per device.
#' @export
#' @examplesIf keras_available()
#' simulate_devices(8)
#' plot(device_mesh(c(data = 2, model = 4)))
#' plot(device_mesh(c(stage = 2, data = 2, model = 2)))
plot.kerasmesh_device_mesh <- function(x, ..., main = NULL) {
  draw_mesh(x, main = main %||% "Device mesh")
  invisible(x)
}

#' Draw the memory each device needs
#'
#' Draws what one device holds under the plan next to what it would hold
#' with every variable fully replicated, as two horizontal bars stacked by
#' layer, by variable or by kind (weights, gradients, optimizer slots). A
#' device-memory limit, when given, is drawn as a dashed line, and the
#' subtitle says whether each bar fits under it.
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
#'   the model's name; with more layers than `max_groups`, layers that differ
#'   only in their numbers, such as the blocks of a transformer, are one
#'   group: `decoder_block_*/attention/query`), `"rule"` (the layout rule
#'   that places each variable), `"variable"` or `"kind"`.
#' @param what `"total"` counts weights, gradients of trainable variables
#'   and optimizer slots (those the plan counted: see the `optimizer`
#'   argument of [layout_plan()]); `"weights"` counts weights alone.
#' @param limit Device memory to draw as a line: bytes, or a string such as
#'   `"80GB"`, `"16 GiB"` or `"512MB"` (kB, MB, GB, TB are powers of 1000;
#'   KiB, MiB, GiB, TiB powers of 1024). `NULL` for none.
#' @param max_groups Segments shown before the smallest groups are merged
#'   into one.
#' @param main A title; `NULL` for one naming the model.
#' @return `x`, invisibly.
#' @export
#' @examplesIf keras_available()
#' simulate_devices(8)
#' mesh <- device_mesh(c(data = 2, model = 4))
#' lm <- layout_map(mesh, ".*dense.*kernel" = c(NA, "model"),
#'                  ".*dense.*bias" = "model")
#' keras <- reticulate::import("keras")
#' build <- function() {
#'   keras$Sequential(list(
#'     keras$Input(shape = list(16000L)),
#'     keras$layers$Dense(64000L, activation = "relu"),
#'     keras$layers$Dense(8000L, activation = "sigmoid")
#'   ))
#' }
#' plan <- layout_plan(build, lm, optimizer = "adam")
#' plot(plan, limit = "16GB")
#' plot(plan, by = "kind")
plot.kerasmesh_layout_plan <- function(x, path = NULL, ...,
                                       by = c("layer", "rule", "variable",
                                              "kind"),
                                       what = c("total", "weights"),
                                       limit = NULL, max_groups = 10,
                                       main = NULL) {
  if (!is.null(path)) {
    plot(sharding_picture(x, path = path), main = main)
    return(invisible(x))
  }
  by <- check_choice(by, c("layer", "rule", "variable", "kind"))
  what <- check_choice(what, c("total", "weights"))
  limit_label <- if (is.character(limit)) trimws(limit)
  limit <- parse_bytes(limit)
  if (!is.null(limit)) {
    attr(limit, "label") <- limit_label %||% format_bytes(limit)
  }
  max_groups <- check_count(max_groups)
  summary <- attr(x, "summary")
  parts <- plan_memory_parts(x, by, what, max_groups)
  parts <- lump_groups(parts, max_groups)
  if (nrow(parts) == 0) {
    # A model without variables (only Flatten, say): one empty segment.
    parts <- data.frame(group = "no variables", device = 0, replicated = 0)
  }
  main <- main %||% sprintf("Memory per device: model \"%s\"", summary$model)
  draw_memory_bars(parts, summary, attr(x, "mesh"), what, limit, main)
  invisible(x)
}

# -- the mesh -----------------------------------------------------------------

draw_mesh <- function(mesh, main) {
  devices <- mesh_devices(mesh)
  shape <- mesh_shape(mesh)
  axes <- names(shape)
  rank <- length(shape)
  panels <- mesh_panels(devices)
  plot_page(main, mesh_summary(mesh))
  fills <- seq_fills(if (rank == 1) shape[[1]] else shape[[2]])
  draw_panels(length(panels), function(p) {
    panel <- panels[[p]]
    cells <- panel$devices
    labels <- matrix(lapply(cells, identity), nrow(cells))
    col_fill <- fills[col(cells)]
    draw_labelled_grid(
      labels = labels, fills = matrix(col_fill, nrow(cells)),
      col_sizes = rep(1, ncol(cells)), row_sizes = rep(1, nrow(cells)),
      col_labels = as.character(seq_len(ncol(cells)) - 1L),
      row_labels = if (rank >= 2) as.character(seq_len(nrow(cells)) - 1L),
      col_title = sprintf("%s (%d)", axes[[min(2, rank)]],
                          shape[[min(2, rank)]]),
      row_title = if (rank >= 2) sprintf("%s (%d)", axes[[1]], shape[[1]]),
      heading = panel$label, aspect = nrow(cells) / ncol(cells)
    )
  })
  grid::popViewport(0)
}

# 2-D slices of a device array: one per index of the axes after the second.
mesh_panels <- function(devices) {
  shape <- dim(devices)
  axes <- names(dimnames(devices))
  if (length(shape) == 1) {
    return(list(list(label = NULL,
                     devices = matrix(as.vector(devices), nrow = 1))))
  }
  if (length(shape) == 2) {
    return(list(list(label = NULL, devices = unclass(devices))))
  }
  slices <- expand.grid(lapply(shape[-(1:2)], seq_len))
  lapply(seq_len(nrow(slices)), function(s) {
    index <- unlist(slices[s, ])
    slice <- do.call(`[`, c(list(devices, TRUE, TRUE), as.list(index),
                            drop = FALSE))
    list(
      label = paste(sprintf("%s = %d", axes[-(1:2)], index - 1L),
                    collapse = ", "),
      devices = matrix(slice, shape[1], shape[2])
    )
  })
}

# -- the memory plan ----------------------------------------------------------

# One row per group: bytes per device under the plan and replicated.
plan_memory_parts <- function(x, by, what, max_groups = Inf) {
  s <- attr(x, "summary")
  optimizer <- if (is.null(s$optimizer)) "optimizer" else s$optimizer
  total <- what == "total"
  slots <- if (total && !is.null(s$optimizer)) s$slots %||% 0 else 0
  train <- if (total) as.numeric(x$trainable) else rep(0, nrow(x))
  kinds <- list(
    device = cbind(x$device_bytes, x$device_bytes * train,
                   x$device_bytes * train * slots),
    replicated = cbind(x$bytes, x$bytes * train, x$bytes * train * slots)
  )
  other <- if (total && !is.null(s$optimizer)) {
    c(device = s$device_optimizer - sum(kinds$device[, 3]),
      replicated = s$replicated_optimizer - sum(kinds$replicated[, 3]))
  } else {
    c(device = 0, replicated = 0)
  }
  other <- pmax(other, 0)
  if (by == "kind") {
    parts <- data.frame(
      group = c("weights", "gradients", paste(optimizer, "slots")),
      device = colSums(kinds$device), replicated = colSums(kinds$replicated),
      stringsAsFactors = FALSE
    )
    parts$device[3] <- parts$device[3] + other[["device"]]
    parts$replicated[3] <- parts$replicated[3] + other[["replicated"]]
    return(parts[parts$replicated > 0 | seq_len(3) == 1, , drop = FALSE])
  }
  paths <- x$path
  prefix <- paste0(s$model, "/")
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
  if (by == "layer" && length(unique(group)) > max_groups) {
    group <- gsub("[0-9]+", "*", group)
  }
  group <- factor(group, levels = unique(group))
  parts <- data.frame(
    group = levels(group),
    device = as.numeric(tapply(rowSums(kinds$device), group, sum)),
    replicated = as.numeric(tapply(rowSums(kinds$replicated), group, sum)),
    stringsAsFactors = FALSE
  )
  # Optimizer variables that are not slots (the iteration counter) get a
  # segment only when it would be visible.
  if (other[["replicated"]] > 1e-3 * sum(kinds$replicated)) {
    parts <- rbind(parts, data.frame(
      group = paste(optimizer, "(other variables)"),
      device = other[["device"]], replicated = other[["replicated"]],
      stringsAsFactors = FALSE
    ))
  }
  parts
}

# The largest `max_groups - 1` groups, in their order, and the rest as one.
lump_groups <- function(parts, max_groups) {
  if (nrow(parts) <= max_groups) {
    return(parts)
  }
  keep <- sort(utils::head(order(parts$replicated, decreasing = TRUE),
                           max_groups - 1))
  rest <- parts[-keep, , drop = FALSE]
  rbind(parts[keep, , drop = FALSE], data.frame(
    group = sprintf("%d others", nrow(rest)),
    device = sum(rest$device), replicated = sum(rest$replicated),
    stringsAsFactors = FALSE
  ))
}

draw_memory_bars <- function(parts, summary, mesh, what, limit, main) {
  totals <- if (what == "weights") {
    c(device = summary$device_weights,
      replicated = summary$replicated_weights)
  } else {
    c(device = summary$device_total, replicated = summary$replicated_total)
  }
  contents <- if (what == "weights") {
    "Weights"
  } else if (is.null(summary$optimizer)) {
    "Weights and gradients (no optimizer counted)"
  } else {
    sprintf("Weights, gradients and %s slots", summary$optimizer)
  }
  subtitle <- sprintf("%s on a %s", contents, mesh_summary(mesh))
  if (!is.null(limit)) {
    fits <- function(b) if (b <= limit) "fits" else "does not fit"
    subtitle <- c(subtitle, sprintf(
      "Limit %s per device: the plan's %s %s; fully replicated, %s %s.",
      attr(limit, "label"), format_bytes(totals[["device"]]),
      fits(totals[["device"]]), format_bytes(totals[["replicated"]]),
      fits(totals[["replicated"]])
    ))
  }
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

  # The bars.
  grid::pushViewport(grid::viewport(layout.pos.col = 2))
  grid::pushViewport(grid::viewport(
    y = grid::unit(2, "lines"), just = "bottom",
    height = grid::unit(1, "npc") - grid::unit(3.2, "lines")
  ))
  xmax <- max(c(totals, limit)) * 1.08
  if (!is.finite(xmax) || xmax <= 0) {
    xmax <- 1
  }
  ticks <- pretty(c(0, xmax / 1.08), n = 4)
  ticks <- ticks[ticks <= xmax]
  grid::grid.segments(ticks / xmax, 0, ticks / xmax, 1,
                      gp = grid::gpar(col = "grey85"))
  grid::grid.text(format_bytes(ticks), x = ticks / xmax,
                  y = grid::unit(-1, "lines"),
                  gp = grid::gpar(fontsize = 8, col = "grey30"))
  if (!is.null(limit)) {
    grid::grid.segments(limit / xmax, 0, limit / xmax, 0.95,
                        gp = grid::gpar(lty = "dashed", lwd = 1.6))
    grid::grid.text(paste("limit", attr(limit, "label")),
                    x = limit / xmax, y = 0.97, just = c("centre", "bottom"),
                    gp = grid::gpar(fontsize = 8.5, fontface = "bold"))
  }
  bar_y <- c(0.7, 0.3)
  bar_h <- 0.28
  for (b in 1:2) {
    values <- if (b == 1) parts$device else parts$replicated
    ends <- cumsum(values) / xmax
    starts <- c(0, utils::head(ends, -1))
    grid::grid.rect(x = starts, y = bar_y[b], width = ends - starts,
                    height = bar_h, just = c("left", "centre"),
                    gp = grid::gpar(fill = fills, col = "grey15", lwd = 0.7))
    widths_in <- (ends - starts) * plot_width()
    for (g in seq_along(values)) {
      size <- text_size(parts$group[g], 7.5)
      if (widths_in[g] > size[1, "w"] + 0.08) {
        grid::grid.text(parts$group[g], x = (starts[g] + ends[g]) / 2,
                        y = bar_y[b], gp = grid::gpar(fontsize = 7.5))
      }
    }
    total <- grid::textGrob(
      format_bytes(totals[[b]]),
      x = grid::unit(max(ends, 0), "npc") + grid::unit(0.3, "lines"),
      y = bar_y[b], just = "left",
      gp = grid::gpar(fontsize = 8.5, fontface = "bold")
    )
    grid::grid.rect(x = grid::unit(max(ends, 0), "npc") +
                      grid::unit(0.15, "lines"),
                    y = bar_y[b], just = "left",
                    width = grid::grobWidth(total) + grid::unit(0.3, "lines"),
                    height = grid::grobHeight(total) + grid::unit(0.3, "lines"),
                    gp = grid::gpar(fill = "white", col = NA))
    grid::grid.draw(total)
    grid::grid.text(bar_names[b], x = grid::unit(-0.4, "lines"),
                    y = bar_y[b], just = "right",
                    gp = grid::gpar(fontsize = 9))
  }
  grid::grid.lines(c(0, 0), c(0, 1), gp = grid::gpar(col = "grey40"))
  grid::popViewport(2)

  # The legend, in inches so swatches and labels line up.
  grid::pushViewport(grid::viewport(layout.pos.col = 3))
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
  grid::popViewport(0)
}

# "80GB", "16 GiB", 512e6 as bytes; NULL stays NULL.
parse_bytes <- function(x, arg = rlang::caller_arg(x),
                        call = rlang::caller_env()) {
  if (is.null(x)) {
    return(NULL)
  }
  if (is.numeric(x) && length(x) == 1 && !is.na(x) && x > 0) {
    return(as.numeric(x))
  }
  units <- c(b = 1, kb = 1e3, mb = 1e6, gb = 1e9, tb = 1e12,
             kib = 2^10, mib = 2^20, gib = 2^30, tib = 2^40)
  if (is.character(x) && length(x) == 1 && !is.na(x)) {
    m <- regmatches(x, regexec(
      "^\\s*([0-9]*\\.?[0-9]+(?:[eE][0-9]+)?)\\s*([A-Za-z]*)\\s*$", x,
      perl = TRUE
    ))[[1]]
    unit <- tolower(if (length(m) && nzchar(m[3])) m[3] else "b")
    if (length(m) && unit %in% names(units)) {
      return(as.numeric(m[2]) * units[[unit]])
    }
  }
  kerasmesh_abort(
    c("{.arg {arg}} must be a number of bytes or a size such as
       {.val 80GB}.",
      x = "Received {.obj_type_friendly {x}}{received_value(x)}.",
      i = "Units: B, kB, MB, GB, TB (powers of 1000) or KiB, MiB, GiB, TiB
           (powers of 1024)."),
    kind = "argument", call = call
  )
}

# -- grid helpers ------------------------------------------------------------

# A new page with a bold title and grey subtitle lines; pushes the body's
# viewport (pop it when done).
plot_page <- function(title, subtitle = NULL) {
  grid::grid.newpage()
  n <- length(subtitle)
  top <- 2 + 1.2 * n
  width <- plot_width() - 0.3
  lay <- grid::grid.layout(2, 1, heights = grid::unit(c(top, 1),
                                                      c("lines", "null")))
  grid::pushViewport(grid::viewport(layout = lay))
  grid::pushViewport(grid::viewport(layout.pos.row = 1))
  grid::grid.text(title, x = grid::unit(0.15, "inches"),
                  y = grid::unit(1, "npc") - grid::unit(1, "lines"),
                  just = "left",
                  gp = grid::gpar(fontsize = fitted_fontsize(title, width,
                                                             1, 12),
                                  fontface = "bold"))
  for (i in seq_len(n)) {
    grid::grid.text(subtitle[[i]], x = grid::unit(0.15, "inches"),
                    y = grid::unit(1, "npc") - grid::unit(1.1 + 1.2 * i,
                                                          "lines"),
                    just = "left",
                    gp = grid::gpar(fontsize = fitted_fontsize(
                      subtitle[[i]], width, 1, 9
                    ), col = "grey25"))
  }
  grid::popViewport()
  grid::pushViewport(grid::viewport(
    layout.pos.row = 2,
    width = grid::unit(1, "npc") - grid::unit(0.3, "inches"),
    height = grid::unit(1, "npc") - grid::unit(0.2, "inches")
  ))
  invisible()
}

# Calls draw(p) in the viewport of each of n panels, laid out in a grid.
draw_panels <- function(n, draw, ncol = ceiling(sqrt(n))) {
  nrow <- ceiling(n / ncol)
  grid::pushViewport(grid::viewport(layout = grid::grid.layout(nrow, ncol)))
  for (p in seq_len(n)) {
    grid::pushViewport(grid::viewport(
      layout.pos.row = (p - 1) %/% ncol + 1,
      layout.pos.col = (p - 1) %% ncol + 1
    ))
    grid::pushViewport(grid::viewport(
      width = grid::unit(1, "npc") - grid::unit(0.15, "inches"),
      height = grid::unit(1, "npc") - grid::unit(0.15, "inches")
    ))
    draw(p)
    grid::popViewport(2)
  }
  grid::popViewport()
}

# A rectangle cut into rows and columns (sizes in proportion), each cell
# filled and labelled with its lines, with index labels along the top and
# left, optional axis titles and a heading; `aspect` is height / width.
draw_labelled_grid <- function(labels, fills, col_sizes, row_sizes,
                               col_labels, row_labels = NULL,
                               col_title = NULL, row_title = NULL,
                               heading = NULL, aspect = 1, fontsize = 10) {
  line <- grid::convertHeight(grid::unit(1, "lines"), "inches", TRUE)
  index_fs <- 8
  # The heading shares the line of the column title.
  top <- line * (0.3 + 1.1 * (!is.null(heading) || !is.null(col_title))
                 + 1.1 * (length(col_labels) > 0 && any(nzchar(col_labels))))
  left <- 0.05 + line * 1.1 * (!is.null(row_title)) +
    if (length(row_labels) && any(nzchar(row_labels))) {
      max(text_size(row_labels, index_fs)[, "w"]) + 0.08
    } else {
      0
    }
  avail_w <- max(plot_width() - left - 0.05, 0.1)
  avail_h <- max(plot_height() - top - 0.05, 0.1)
  w <- min(avail_w, avail_h / aspect)
  h <- w * aspect
  x0 <- left + (avail_w - w) / 2
  y0 <- avail_h - h + 0.05
  xs <- x0 + c(0, cumsum(col_sizes)) / sum(col_sizes) * w
  ys <- y0 + h - c(0, cumsum(row_sizes)) / sum(row_sizes) * h
  inch <- function(v) grid::unit(v, "inches")
  col_w <- diff(xs)
  row_h <- -diff(ys)

  # Cells, and their labels at one size that fits every cell.
  cells <- which(!is.na(fills), arr.ind = TRUE)
  r <- cells[, 1]
  c <- cells[, 2]
  grid::grid.rect(inch(xs[c]), inch(ys[r + 1]), inch(col_w[c]),
                  inch(row_h[r]), just = c("left", "bottom"),
                  gp = grid::gpar(fill = fills[cells], col = "grey15",
                                  lwd = 0.8))
  arranged <- lapply(seq_len(nrow(cells)), function(k) {
    arrange_names(labels[[r[k], c[k]]], col_w[c[k]] - 0.06,
                  row_h[r[k]] - 0.04, fontsize)
  })
  size <- min(vapply(arranged, `[[`, 1, "fontsize"))
  for (k in seq_len(nrow(cells))) {
    grid::grid.text(arranged[[k]]$label, inch((xs[c[k]] + xs[c[k] + 1]) / 2),
                    inch((ys[r[k]] + ys[r[k] + 1]) / 2),
                    gp = grid::gpar(fontsize = size, lineheight = 1))
  }
  grid::grid.rect(inch(x0), inch(y0), inch(w), inch(h),
                  just = c("left", "bottom"),
                  gp = grid::gpar(fill = NA, col = "black", lwd = 1.6))

  # Index labels and axis titles.
  y_top <- y0 + h
  if (length(col_labels) && any(nzchar(col_labels))) {
    fs <- min(index_fs, min(vapply(seq_along(col_labels), function(k) {
      fitted_fontsize(col_labels[k], col_w[k] - 0.02, line, index_fs, 4)
    }, 1)))
    grid::grid.text(col_labels, inch((xs[-1] + utils::head(xs, -1)) / 2),
                    inch(y_top + 0.35 * line), just = c("centre", "bottom"),
                    gp = grid::gpar(fontsize = fs, col = "grey20"))
    y_top <- y_top + 1.1 * line
  }
  heading_end <- 0
  if (!is.null(heading)) {
    heading_x <- x0 - left + 0.05
    grid::grid.text(heading, inch(heading_x), inch(y_top + 0.35 * line),
                    just = c("left", "bottom"),
                    gp = grid::gpar(fontsize = 9, fontface = "bold"))
    heading_end <- heading_x + text_size(heading, 9)[1, "w"] + 0.2
  }
  # Titles come as alternatives, longest first: the first that fits at a
  # readable size is drawn.
  room <- plot_width() - heading_end
  for (title in col_title) {
    fs <- fitted_fontsize(title, room, line, 9, 1)
    if (fs >= 7 || identical(title, col_title[[length(col_title)]])) {
      title_w <- text_size(title, fs)[1, "w"]
      centre <- max(x0 + w / 2, heading_end + title_w / 2)
      if (fs >= 5) {
        grid::grid.text(title, inch(centre), inch(y_top + 0.35 * line),
                        just = c("centre", "bottom"),
                        gp = grid::gpar(fontsize = fs, fontface = "bold"))
      }
      break
    }
  }
  x_left <- x0
  if (length(row_labels) && any(nzchar(row_labels))) {
    fs <- min(index_fs, min(vapply(seq_along(row_labels), function(k) {
      fitted_fontsize(row_labels[k], left, row_h[k], index_fs, 4)
    }, 1)))
    grid::grid.text(row_labels, inch(x0 - 0.06),
                    inch((ys[-1] + utils::head(ys, -1)) / 2), just = "right",
                    gp = grid::gpar(fontsize = fs, col = "grey20"))
    x_left <- x0 - max(text_size(row_labels, fs)[, "w"]) - 0.08
  }
  # The row title, shortened ("dimension 1 (16)", "dim 1 (16)", "dim 1")
  # until it fits along the rows at a readable size.
  for (title in row_title) {
    fs <- fitted_fontsize(title, h + 0.1, line, 9, 1)
    last <- identical(title, row_title[[length(row_title)]])
    if (fs >= 8 || (last && fs >= 5)) {
      grid::grid.text(title, inch(x_left - 0.35 * line), inch(y0 + h / 2),
                      rot = 90, just = c("centre", "bottom"),
                      gp = grid::gpar(fontsize = fs, fontface = "bold"))
      break
    }
  }
  invisible()
}

# Device names in lines of k names, with the k that allows the largest
# text in a w x h (inches) cell.
arrange_names <- function(names, w, h, fontsize) {
  best <- list(label = "", fontsize = fontsize)
  if (length(names) == 0) {
    return(best)
  }
  best$fontsize <- -Inf
  best$misfit <- Inf
  for (k in seq_along(names)) {
    groups <- split(names, ceiling(seq_along(names) / k))
    label <- paste(vapply(groups, paste, "", collapse = " "),
                   collapse = "\n")
    size <- fitted_fontsize(label, w, h, fontsize, 3)
    # Among equal sizes, the shape closest to the cell's.
    extent <- text_size(label, fontsize)
    misfit <- abs(log((extent[1, "w"] / extent[1, "h"]) / (w / h)))
    if (size > best$fontsize + 1e-6 ||
        (abs(size - best$fontsize) <= 1e-6 && misfit < best$misfit)) {
      best <- list(label = label, fontsize = size, misfit = misfit)
    }
  }
  best
}

# Width and height (inches) of each label at a font size.
text_size <- function(labels, fontsize) {
  out <- vapply(labels, function(l) {
    g <- grid::textGrob(l, gp = grid::gpar(fontsize = fontsize,
                                           lineheight = 1))
    c(w = grid::convertWidth(grid::grobWidth(g), "inches", TRUE),
      h = grid::convertHeight(grid::grobHeight(g), "inches", TRUE))
  }, numeric(2))
  t(matrix(out, nrow = 2, dimnames = list(c("w", "h"), NULL)))
}

# The largest font size up to `fontsize` at which `label` fits w x h.
fitted_fontsize <- function(label, w, h, fontsize, min_size = 5) {
  size <- text_size(label, fontsize)
  scale <- min(1, w / size[1, "w"], h / size[1, "h"])
  max(min_size, fontsize * scale)
}

plot_width <- function() {
  grid::convertWidth(grid::unit(1, "npc"), "inches", TRUE)
}

plot_height <- function() {
  grid::convertHeight(grid::unit(1, "npc"), "inches", TRUE)
}

# Light fills that darken in order, for blocks and mesh columns; they differ
# in lightness, so neighbours stay apart in greyscale and black text stays
# readable on all of them.
seq_fills <- function(n) {
  if (n <= 1) {
    return(grDevices::hcl(230, 25, 86))
  }
  grDevices::hcl(230, 25, seq(94, 64, length.out = n))
}

# Fills for stacked groups: hues around the circle, with lightness cycling
# through three levels so neighbouring segments differ in greyscale.
group_fills <- function(n) {
  hues <- seq(15, 375, length.out = n + 1)[seq_len(n)]
  lightness <- c(88, 62, 76)[(seq_len(n) - 1) %% 3 + 1]
  grDevices::hcl(hues, 35, lightness)
}
