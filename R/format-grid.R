# Console renderings: labelled grids that wrap to the console width.

# Lines of a device grid. 1-D: one row; 2-D: rows by columns; higher: one
# 2-D slice per index of the remaining axes, as R prints arrays.
format_device_grid <- function(grid, width = cli::console_width()) {
  axes <- names(dimnames(grid))
  shape <- dim(grid)
  label <- function(axis, i) paste0(axis, "[", i, "]")
  if (length(shape) == 1) {
    cells <- matrix(as.vector(grid), nrow = 1)
    return(format_grid(cells, "", label(axes, seq_len(shape) - 1L), width))
  }
  if (length(shape) == 2) {
    return(format_grid(
      matrix(grid, nrow = shape[1]),
      label(axes[1], seq_len(shape[1]) - 1L),
      label(axes[2], seq_len(shape[2]) - 1L),
      width
    ))
  }
  slices <- expand.grid(lapply(shape[-(1:2)], function(n) seq_len(n)))
  out <- character()
  for (s in seq_len(nrow(slices))) {
    index <- unlist(slices[s, ])
    heading <- paste0(", , ", paste(label(axes[-(1:2)], index - 1L),
                                    collapse = ", "))
    slice <- do.call(`[`, c(list(grid, TRUE, TRUE), as.list(index),
                            drop = FALSE))
    dim(slice) <- shape[1:2]
    dimnames(slice) <- dimnames(grid)[1:2]
    out <- c(out, "", heading, "", format_device_grid(slice, width))
  }
  out
}

# A character matrix with row and column labels, left-aligned columns, in
# blocks of columns that fit `width`.
format_grid <- function(cells, row_labels, col_labels, width = 80) {
  col_width <- pmax(nchar(col_labels), apply(nchar(cells), 2, max))
  row_width <- max(nchar(row_labels))
  blocks <- split_columns(col_width, width - row_width - 2)
  out <- character()
  for (cols in blocks) {
    lines <- c(
      pad_row("", col_labels[cols], row_width, col_width[cols]),
      vapply(seq_len(nrow(cells)), function(r) {
        pad_row(row_labels[r], cells[r, cols], row_width, col_width[cols])
      }, character(1))
    )
    out <- c(out, if (length(out)) "", lines)
  }
  out
}

pad_row <- function(label, cells, row_width, col_width) {
  line <- paste(
    pad_right(label, row_width),
    paste(pad_right(cells, col_width), collapse = " "),
    sep = "  "
  )
  sub("\\s+$", "", line)
}

split_columns <- function(col_width, width) {
  blocks <- list()
  current <- integer()
  used <- 0
  for (i in seq_along(col_width)) {
    need <- col_width[i] + (length(current) > 0)
    if (length(current) > 0 && used + need > width) {
      blocks <- c(blocks, list(current))
      current <- integer()
      need <- col_width[i]
      used <- 0
    }
    current <- c(current, i)
    used <- used + need
  }
  c(blocks, list(current))
}

pad_right <- function(x, width) {
  paste0(x, strrep(" ", pmax(0, width - nchar(x))))
}

# Shortens long paths in the middle, keeping their first component and
# their end: "adam/...hidden_kernel_momentum".
truncate_left <- function(x, width) {
  long <- nchar(x) > width
  head <- sub("/.*$", "/", x[long])
  head[nchar(head) > width / 2 | head == x[long]] <- ""
  keep <- width - nchar(head) - 3
  x[long] <- paste0(head, "...", substring(x[long], nchar(x[long]) - keep + 1))
  x
}

truncate_right <- function(x, width = 72) {
  long <- nchar(x) > width
  x[long] <- paste0(substring(x[long], 1, width - 3), "...")
  x
}
