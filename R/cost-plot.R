#' Draw what a training step costs each device
#'
#' Draws, for one [layout_cost()] or each layout of a [compare_layouts()],
#' the memory one device needs during a training step as a horizontal bar
#' stacked by part (weights, optimizer state, batch, gradients and
#' activations, other outputs), and, below, the bytes each device sends per
#' step over each mesh axis. A device memory, when given, is drawn as a
#' dashed line and the subtitle says which layouts fit: those whose step
#' needs at most `memory` per device by XLA's total. Drawn with
#' \pkg{grid}, in native units, so the picture scales with the device.
#'
#' @param x A [layout_cost()] or a [compare_layouts()] result.
#' @param ... Not used.
#' @param memory Device memory to draw as a line: bytes, or a string
#'   such as `"80GB"`; `NULL` for none (for a comparison, the one it was
#'   made with).
#' @param main A title; `NULL` for one naming the model.
#' @param device_memory Deprecated: use `memory`.
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
#'   keras$Sequential(list(keras$Input(shape = list(32L)),
#'                         keras$layers$Dense(64L), keras$layers$Dense(16L)))
#' }
#' cost <- layout_cost(build, model_parallel(lm), batch_size = 16,
#'                     optimizer = "adam", loss = "mse")
#' plot(cost, memory = "20kB")
plot.kerasmesh_layout_cost <- function(x, ..., memory = NULL, main = NULL,
                                       device_memory = deprecated()) {
  check_dots_none()
  memory_arg <- typed_name("memory", "device_memory")
  memory <- renamed_arg("memory", "device_memory")
  check_title(main)
  memory <- check_bytes(memory, arg = memory_arg)
  check_cost_object(x)
  check_unedited(x)
  with_edits_named(x, {
    label <- sprintf("%s mesh", paste(.subset2(x$mesh, "shape"),
                                      collapse = " x "))
    cmp <- new_layout_comparison(stats::setNames(list(x), label), memory)
    draw_layout_costs(cmp, main %||% sprintf(
      "One training step: model \"%s\", batch %d", x$plan$model, x$batch_size
    ))
    invisible(x)
  })
}

#' @rdname plot.kerasmesh_layout_cost
#' @export
plot.kerasmesh_layout_comparison <- function(x, ..., memory = NULL,
                                             main = NULL,
                                             device_memory = deprecated()) {
  check_dots_none()
  memory_arg <- typed_name("memory", "device_memory")
  memory <- renamed_arg("memory", "device_memory")
  check_title(main)
  memory <- check_bytes(memory, arg = memory_arg)
  check_unedited(x)
  with_edits_named(x, {
    if (!is.null(memory)) {
      x <- with_memory(x, memory)
    }
    check_comparison_object(x)
    if (NROW(x) == 0) {
      kerasmesh_abort(c("{.arg x} must hold at least one layout to draw.",
                        x = "Received a comparison of no layouts."),
                      kind = kinds$argument)
    }
    draw_layout_costs(x, main %||% sprintf(
      "Layouts compared: model \"%s\", batch %d", attr(x, "model"),
      attr(x, "batch_size")
    ))
    invisible(x)
  })
}

cost_parts <- c(weights = "weights", optimizer = "optimizer state",
                inputs = "batch", activations = "gradients, activations",
                outputs = "other outputs")

draw_layout_costs <- function(x, main) {
  memory <- attr(x, "memory")
  plot_page(main, cost_subtitle(x, memory))
  rows <- traffic_rows(x)
  n_mem <- nrow(x)
  n_traffic <- max(nrow(rows), 1)
  lay <- grid::grid.layout(2, 1, heights = grid::unit(
    c(n_mem + 1.6, n_traffic + 1.6), "null"
  ))
  grid::pushViewport(grid::viewport(layout = lay))
  labels <- ifelse(rows$axes == "", "(no axis)", rows$axes)
  if (n_mem > 1) {
    labels <- sprintf("%s: %s", rows$layout, labels)
  }
  name_w <- max(text_size(c(x$layout, labels, "label"), 8)[, "w"]) + 0.2
  fills <- group_fills(length(cost_parts))
  grid::pushViewport(grid::viewport(layout.pos.row = 1))
  draw_memory_panel(x, memory, name_w, fills)
  grid::popViewport()
  draw_cost_legend(fills)
  grid::pushViewport(grid::viewport(layout.pos.row = 2))
  draw_traffic_panel(rows, labels, name_w, n_traffic)
  grid::popViewport(2)
  grid::popViewport(0)
}

cost_subtitle <- function(x, memory) {
  subtitle <- paste("Memory per device, and bytes each device sends per",
                    "step by mesh axis")
  if (!is.null(memory)) {
    fits <- x$layout[fits_memory(x$need, memory)]
    subtitle <- c(subtitle, sprintf(
      "Device memory %s: %s", attr(memory, "label"),
      if (length(fits) == 0) "no layout fits" else
        paste("fits:", paste(gsub("\n", " ", fits), collapse = ", "))
    ))
  }
  if (!is.null(x$time)) {
    subtitle <- c(subtitle, paste0(
      "Modeled time per global batch: ",
      paste(sprintf("%s: %s", gsub("\n", " ", x$layout),
                    format_seconds(x$time)), collapse = ", ")
    ))
  }
  subtitle
}

# Bytes per device per step by layout and mesh axis, largest first within
# each layout.
traffic_rows <- function(x) {
  traffic <- attr(x, "traffic")
  if (nrow(traffic) == 0) {
    return(data.frame(layout = character(), axes = character(),
                      bytes = numeric()))
  }
  agg <- stats::aggregate(bytes ~ layout + axes, data = traffic, FUN = sum)
  agg[order(match(agg$layout, x$layout), -agg$bytes), , drop = FALSE]
}

# Memory: one stacked bar per layout, and the device memory as a line.
draw_memory_panel <- function(x, memory, name_w, fills) {
  n_mem <- nrow(x)
  values <- as.matrix(x[, names(cost_parts), drop = FALSE])
  xmax <- max(c(x$total, memory), 1) * 1.12
  cost_panel(name_w, xmax, n_mem, "Memory per device", function() {
    for (i in seq_len(n_mem)) {
      ends <- cumsum(values[i, ])
      starts <- c(0, utils::head(ends, -1))
      y <- n_mem - i + 0.5
      grid::grid.rect(grid::unit(starts, "native"), grid::unit(y, "native"),
                      grid::unit(ends - starts, "native"),
                      grid::unit(0.7, "native"), just = c("left", "centre"),
                      gp = grid::gpar(fill = fills, col = "grey15",
                                      lwd = 0.6))
      grid::grid.text(bytes_text(x$total[i]),
                      grid::unit(x$total[i], "native") +
                        grid::unit(0.3, "lines"),
                      grid::unit(y, "native"), just = "left",
                      gp = grid::gpar(fontsize = 8, fontface = "bold"))
    }
    if (!is.null(memory)) {
      grid::grid.segments(grid::unit(memory, "native"), grid::unit(0, "npc"),
                          grid::unit(memory, "native"), grid::unit(1, "npc"),
                          gp = grid::gpar(lty = "dashed", lwd = 1.4))
      grid::grid.text(attr(memory, "label"), grid::unit(memory, "native"),
                      grid::unit(1, "npc") + grid::unit(0.15, "lines"),
                      just = c("centre", "bottom"),
                      gp = grid::gpar(fontsize = 7, fontface = "bold"))
    }
  }, labels = x$layout)
}

# Traffic: one bar per layout and mesh axis.
draw_traffic_panel <- function(rows, labels, name_w, n_traffic) {
  tmax <- max(c(rows$bytes, 1)) * 1.25
  cost_panel(name_w, tmax, n_traffic, "Bytes per device per step, by mesh axis",
             function() {
               if (nrow(rows) == 0) {
                 grid::grid.text("no collectives",
                                 gp = grid::gpar(fontsize = 9))
                 return()
               }
               y <- nrow(rows) - seq_len(nrow(rows)) + 0.5
               grid::grid.rect(grid::unit(0, "native"),
                               grid::unit(y, "native"),
                               grid::unit(rows$bytes, "native"),
                               grid::unit(0.6, "native"),
                               just = c("left", "centre"),
                               gp = grid::gpar(
                                 fill = grDevices::hcl(230, 30, 70),
                                 col = "grey15", lwd = 0.6
                               ))
               grid::grid.text(bytes_text(rows$bytes),
                               grid::unit(rows$bytes, "native") +
                                 grid::unit(0.3, "lines"),
                               grid::unit(y, "native"), just = "left",
                               gp = grid::gpar(fontsize = 8))
             }, labels = labels, axis = nrow(rows) > 0)
}

# A panel with a title, bar labels on the left and a byte axis below; the
# body is drawn by `draw()` in a viewport whose native x is bytes and
# native y counts bars from the bottom.
cost_panel <- function(name_w, xmax, n, title, draw, labels, axis = TRUE) {
  grid::grid.text(title, x = grid::unit(0.05, "inches"),
                  y = grid::unit(1, "npc") - grid::unit(0.6, "lines"),
                  just = "left", gp = grid::gpar(fontsize = 9,
                                                 fontface = "bold"))
  grid::pushViewport(grid::viewport(
    x = grid::unit(name_w, "inches"), y = grid::unit(2, "lines"),
    width = grid::unit(1, "npc") - grid::unit(name_w + 0.7, "inches"),
    height = grid::unit(1, "npc") - grid::unit(3.4, "lines"),
    just = c("left", "bottom"), xscale = c(0, xmax), yscale = c(0, n)
  ))
  if (axis) {
    ticks <- pretty(c(0, xmax / 1.12), n = 4)
    ticks <- ticks[ticks <= xmax]
    grid::grid.segments(grid::unit(ticks, "native"), grid::unit(0, "npc"),
                        grid::unit(ticks, "native"), grid::unit(1, "npc"),
                        gp = grid::gpar(col = "grey88"))
    grid::grid.text(bytes_text(ticks), grid::unit(ticks, "native"),
                    grid::unit(-0.8, "lines"),
                    gp = grid::gpar(fontsize = 7, col = "grey30"))
  }
  draw()
  if (length(labels) > 0) {
    grid::grid.text(labels, grid::unit(-0.4, "lines"),
                    grid::unit(length(labels) - seq_along(labels) + 0.5,
                               "native"),
                    just = "right", gp = grid::gpar(fontsize = 8,
                                                    lineheight = 0.9))
  }
  grid::grid.lines(grid::unit(c(0, 0), "native"), c(0, 1),
                   gp = grid::gpar(col = "grey40"))
  grid::popViewport()
}

# Swatches and names of the memory parts, in one row below the memory
# panel; native x counts characters.
draw_cost_legend <- function(fills) {
  widths <- nchar(cost_parts) + 6
  offsets <- cumsum(c(0, utils::head(widths, -1)))
  grid::pushViewport(grid::viewport(layout.pos.row = 1))
  grid::pushViewport(grid::viewport(
    y = grid::unit(0.5, "lines"), height = grid::unit(1, "lines"),
    width = grid::unit(0.95, "npc"), xscale = c(0, sum(widths))
  ))
  grid::grid.rect(grid::unit(offsets, "native"), 0.5,
                  grid::unit(1.5, "native"), grid::unit(0.7, "npc"),
                  just = c("left", "centre"),
                  gp = grid::gpar(fill = fills, col = "grey15", lwd = 0.5))
  grid::grid.text(cost_parts, grid::unit(offsets + 2, "native"), 0.5,
                  just = "left", gp = grid::gpar(fontsize = 7))
  grid::popViewport(2)
}
