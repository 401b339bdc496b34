# A small grid toolkit for kerasmesh's pictures: a titled page, panels, a
# labelled grid of cells, text that fits, and fills. The pictures themselves
# are in plot-mesh.R, plot-plan.R, plot-sharding.R and plot-cost.R.

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
