# The console picture of a sharding: a header, the roles of the mesh axes
# and box grids of blocks, within the console width.

#' @rdname sharding_picture
#' @param width For `format()`: the console width to fit.
#' @export
format.kerasmesh_sharding_picture <- function(x, ...,
                                              width = cli::console_width()) {
  width <- max(width, 40)
  layout <- picture_layout(x)
  out <- c(picture_header(x, width), picture_roles(x))
  for (panel in layout$panels) {
    out <- c(out, "", if (!is.null(panel$label)) c(panel$label, ""),
             format_block_grid(panel$cells, x$devices, panel$row_labels,
                               panel$col_labels, width))
  }
  out
}

#' @export
print.kerasmesh_sharding_picture <- function(x, ...) {
  writeLines(format(x, ...))
  invisible(x)
}

# The number of columns of panels that draws the largest tensor in the
# current viewport (a rough count of the space labels take).
picture_columns <- function(n, aspect) {
  if (n == 1) {
    return(1L)
  }
  width <- plot_width()
  height <- plot_height()
  drawn <- vapply(seq_len(n), function(ncol) {
    w <- width / ncol - 0.9
    h <- height / ceiling(n / ncol) - 0.75
    min(w, h / aspect)
  }, numeric(1))
  which.max(drawn)
}

picture_header <- function(x, width) {
  rank <- length(x$shape)
  n_blocks <- length(x$devices)
  n_devices <- sum(lengths(x$devices))
  shape <- if (rank == 0) "A scalar" else format_dims(x$shape)
  where <- if (is.null(x$mesh)) {
    sprintf("No mesh: %s", plural_count(n_devices, "device"))
  } else {
    paste("Mesh:", mesh_summary(x$mesh))
  }
  layout <- if (rank == 0) "" else paste0(", layout ", format_axes(x$axes))
  source <- if (identical(x$source, "planned")) {
    "planned (not allocated)"
  } else {
    "as placed"
  }
  blocks <- if (n_blocks == 1) {
    sprintf("1 block, on %s", plural_count(x$copies, "device"))
  } else {
    sprintf("%d blocks of %s, each on %s", n_blocks,
            format_dims(x$shard_shape), plural_count(x$copies, "device"))
  }
  lines <- c(
    sprintf("%s %s%s, %s", shape, x$dtype, layout, source),
    where,
    sprintf("%s: %s of %s per device", blocks, format_bytes(x$device_bytes),
            format_bytes(x$bytes))
  )
  title <- "<kerasmesh_sharding_picture>"
  if (!is.na(x$path)) {
    title <- paste(title, truncate_left(x$path, max(width - 30, 12)))
  }
  c(title, strwrap(lines, width = width, exdent = 2))
}

picture_roles <- function(x) {
  rank <- length(x$shape)
  if (rank <= 1) {
    return(if (rank == 1) "Columns: dimension 1")
  }
  roles <- sprintf("rows: dimension %d; columns: dimension %d", rank - 1,
                   rank)
  if (rank > 2) {
    lead <- seq_len(rank - 2)
    roles <- sprintf("Panels: dimension%s %s; %s",
                     if (rank > 3) "s" else "",
                     paste(lead, collapse = " and "), roles)
  } else {
    roles <- paste0(toupper(substr(roles, 1, 1)), substring(roles, 2))
  }
  roles
}

plural_count <- function(n, word) {
  count_text(n, word, count = format_count(n))
}

# A box grid of blocks, each cell listing its devices, in bands of columns
# that fit `width`.
format_block_grid <- function(cells, devices, row_labels, col_labels,
                              width = 80) {
  box <- box_chars()
  has_rows <- any(nzchar(row_labels))
  row_w <- if (has_rows) max(nchar(row_labels)) + 1 else 0
  available <- width - row_w
  shown <- devices[cells[!is.na(cells)]]
  longest <- max(nchar(unlist(shown)), nchar(col_labels), 1)
  natural <- max(nchar(vapply(shown, paste, "", collapse = " ")),
                 nchar(col_labels))
  per_col <- floor((available - 1) / ncol(cells)) - 3
  inner <- max(longest, min(natural, per_col))
  per_band <- max(1, floor((available - 1) / (inner + 3)))
  bands <- split(seq_len(ncol(cells)),
                 ceiling(seq_len(ncol(cells)) / per_band))
  out <- character()
  for (cols in bands) {
    if (length(out)) {
      out <- c(out, "")
    }
    out <- c(out, format_grid_band(cells[, cols, drop = FALSE], devices,
                                   row_labels, col_labels[cols], row_w,
                                   inner, box))
  }
  out
}

format_grid_band <- function(cells, labels, row_labels, col_labels, row_w,
                             inner, box) {
  n_col <- ncol(cells)
  indent <- strrep(" ", row_w)
  rule <- function(left, mid, right) {
    paste0(indent, left,
           paste(rep(strrep(box$h, inner + 2), n_col), collapse = mid),
           right)
  }
  header <- paste0(indent, " ",
                   paste(pad_right(col_labels, inner + 2), collapse = " "))
  out <- c(if (any(nzchar(col_labels))) sub("\\s+$", "", header),
           rule(box$tl, box$tm, box$tr))
  for (r in seq_len(nrow(cells))) {
    wrapped <- lapply(seq_len(n_col), function(c) {
      i <- cells[r, c]
      if (is.na(i)) "" else wrap_words(labels[[i]], inner)
    })
    height <- max(lengths(wrapped))
    for (l in seq_len(height)) {
      text <- vapply(wrapped, function(w) if (l <= length(w)) w[[l]] else "",
                     "")
      label <- if (l == 1 && row_w > 0) row_labels[[r]] else ""
      out <- c(out, paste0(
        pad_right(label, row_w), box$v, " ",
        paste(pad_right(text, inner), collapse = paste0(" ", box$v, " ")),
        " ", box$v
      ))
    }
    out <- c(out, if (r < nrow(cells)) {
      rule(box$ml, box$mm, box$mr)
    } else {
      rule(box$bl, box$bm, box$br)
    })
  }
  out
}

# Words joined by spaces into lines of at most `width` characters.
wrap_words <- function(words, width) {
  lines <- character()
  current <- ""
  for (w in words) {
    if (!nzchar(current)) {
      current <- w
    } else if (nchar(current) + 1 + nchar(w) <= width) {
      current <- paste(current, w)
    } else {
      lines <- c(lines, current)
      current <- w
    }
  }
  c(lines, current)
}

box_chars <- function() {
  if (cli::is_utf8_output()) {
    list(h = "\u2500", v = "\u2502", tl = "\u250c", tm = "\u252c",
         tr = "\u2510", ml = "\u251c", mm = "\u253c", mr = "\u2524",
         bl = "\u2514", bm = "\u2534", br = "\u2518")
  } else {
    list(h = "-", v = "|", tl = "+", tm = "+", tr = "+", ml = "+",
         mm = "+", mr = "+", bl = "+", bm = "+", br = "+")
  }
}
