# The picture toolkit, over the grid package: a titled page, panels, a
# labelled grid of cells, text that fits, and fills. The pictures themselves
# are in device-mesh-plot.R, plan-plot.R, sharding-plot.R and cost-plot.R.

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
  g <- labelled_grid_geometry(col_sizes, row_sizes, col_labels, row_labels,
                              has_title = !is.null(heading) ||
                                !is.null(col_title),
                              has_row_title = !is.null(row_title), aspect)
  draw_grid_cells(labels, fills, g, fontsize)
  y_top <- draw_col_labels(col_labels, g)
  heading_end <- draw_grid_heading(heading, g, y_top)
  draw_col_title(col_title, g, y_top, heading_end)
  x_left <- draw_row_labels(row_labels, g)
  draw_row_title(row_title, g, x_left)
  invisible()
}

# Where the grid goes in the current viewport, in inches: `x0`, `y0` (its
# bottom left), `w`, `h`, the column edges `xs` and row edges `ys` (top
# down), cell sizes `col_w` and `row_h`, the room `left` of it, the height
# of a `line` and the font size of index labels.
labelled_grid_geometry <- function(col_sizes, row_sizes, col_labels,
                                   row_labels, has_title, has_row_title,
                                   aspect) {
  line <- grid::convertHeight(grid::unit(1, "lines"), "inches", TRUE)
  index_fs <- 8
  # The heading shares the line of the column title.
  top <- line * (0.3 + 1.1 * has_title
                 + 1.1 * (length(col_labels) > 0 && any(nzchar(col_labels))))
  left <- 0.05 + line * 1.1 * has_row_title +
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
  list(line = line, index_fs = index_fs, left = left, x0 = x0, y0 = y0,
       w = w, h = h, xs = xs, ys = ys, col_w = diff(xs), row_h = -diff(ys))
}

inch <- function(v) grid::unit(v, "inches")

# Cells, their labels at one size that fits every cell, and the outline.
draw_grid_cells <- function(labels, fills, g, fontsize) {
  cells <- which(!is.na(fills), arr.ind = TRUE)
  r <- cells[, 1]
  c <- cells[, 2]
  grid::grid.rect(inch(g$xs[c]), inch(g$ys[r + 1]), inch(g$col_w[c]),
                  inch(g$row_h[r]), just = c("left", "bottom"),
                  gp = grid::gpar(fill = fills[cells], col = "grey15",
                                  lwd = 0.8))
  arranged <- lapply(seq_len(nrow(cells)), function(k) {
    arrange_names(labels[[r[k], c[k]]], g$col_w[c[k]] - 0.06,
                  g$row_h[r[k]] - 0.04, fontsize)
  })
  size <- min(vapply(arranged, `[[`, 1, "fontsize"))
  for (k in seq_len(nrow(cells))) {
    grid::grid.text(arranged[[k]]$label,
                    inch((g$xs[c[k]] + g$xs[c[k] + 1]) / 2),
                    inch((g$ys[r[k]] + g$ys[r[k] + 1]) / 2),
                    gp = grid::gpar(fontsize = size, lineheight = 1))
  }
  grid::grid.rect(inch(g$x0), inch(g$y0), inch(g$w), inch(g$h),
                  just = c("left", "bottom"),
                  gp = grid::gpar(fill = NA, col = "black", lwd = 1.6))
}

# Index labels along the top; returns the height (inches) above them.
draw_col_labels <- function(col_labels, g) {
  y_top <- g$y0 + g$h
  if (length(col_labels) && any(nzchar(col_labels))) {
    fs <- min(g$index_fs, min(vapply(seq_along(col_labels), function(k) {
      fitted_fontsize(col_labels[k], g$col_w[k] - 0.02, g$line, g$index_fs,
                      4)
    }, 1)))
    grid::grid.text(col_labels,
                    inch((g$xs[-1] + utils::head(g$xs, -1)) / 2),
                    inch(y_top + 0.35 * g$line), just = c("centre", "bottom"),
                    gp = grid::gpar(fontsize = fs, col = "grey20"))
    y_top <- y_top + 1.1 * g$line
  }
  y_top
}

# The heading, at the left above the grid; returns where it ends (inches).
draw_grid_heading <- function(heading, g, y_top) {
  if (is.null(heading)) {
    return(0)
  }
  heading_x <- g$x0 - g$left + 0.05
  grid::grid.text(heading, inch(heading_x), inch(y_top + 0.35 * g$line),
                  just = c("left", "bottom"),
                  gp = grid::gpar(fontsize = 9, fontface = "bold"))
  heading_x + text_size(heading, 9)[1, "w"] + 0.2
}

# Titles come as alternatives, longest first: the first that fits at a
# readable size is drawn.
draw_col_title <- function(col_title, g, y_top, heading_end) {
  room <- plot_width() - heading_end
  for (title in col_title) {
    fs <- fitted_fontsize(title, room, g$line, 9, 1)
    if (fs >= 7 || identical(title, col_title[[length(col_title)]])) {
      title_w <- text_size(title, fs)[1, "w"]
      centre <- max(g$x0 + g$w / 2, heading_end + title_w / 2)
      if (fs >= 5) {
        grid::grid.text(title, inch(centre), inch(y_top + 0.35 * g$line),
                        just = c("centre", "bottom"),
                        gp = grid::gpar(fontsize = fs, fontface = "bold"))
      }
      break
    }
  }
}

# Index labels along the left; returns where they start (inches).
draw_row_labels <- function(row_labels, g) {
  if (!length(row_labels) || !any(nzchar(row_labels))) {
    return(g$x0)
  }
  fs <- min(g$index_fs, min(vapply(seq_along(row_labels), function(k) {
    fitted_fontsize(row_labels[k], g$left, g$row_h[k], g$index_fs, 4)
  }, 1)))
  grid::grid.text(row_labels, inch(g$x0 - 0.06),
                  inch((g$ys[-1] + utils::head(g$ys, -1)) / 2),
                  just = "right",
                  gp = grid::gpar(fontsize = fs, col = "grey20"))
  g$x0 - max(text_size(row_labels, fs)[, "w"]) - 0.08
}

# The row title, shortened ("dimension 1 (16)", "dim 1 (16)", "dim 1")
# until it fits along the rows at a readable size.
draw_row_title <- function(row_title, g, x_left) {
  for (title in row_title) {
    fs <- fitted_fontsize(title, g$h + 0.1, g$line, 9, 1)
    last <- identical(title, row_title[[length(row_title)]])
    if (fs >= 8 || (last && fs >= 5)) {
      grid::grid.text(title, inch(x_left - 0.35 * g$line),
                      inch(g$y0 + g$h / 2), rot = 90,
                      just = c("centre", "bottom"),
                      gp = grid::gpar(fontsize = fs, fontface = "bold"))
      break
    }
  }
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

# Light fills that darken in order, for shards and mesh columns; they differ
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
