# Device grids for the console, wrapped to its width (by format_table()),
# and long names shortened to fit a column.

# Lines of a device grid. 1-D: one row; 2-D: rows by columns; higher: one
# 2-D slice per index of the remaining axes, as R prints arrays.
format_device_grid <- function(grid, width = cli::console_width()) {
  axes <- names(dimnames(grid))
  shape <- dim(grid)
  label <- function(axis, i) paste0(axis, "[", i, "]")
  if (length(shape) == 1) {
    return(format_table(
      matrix(as.vector(grid), nrow = 1),
      header = label(axes, seq_len(shape) - 1L), row_labels = "",
      sep = " ", indent = "", width = width
    ))
  }
  if (length(shape) == 2) {
    return(format_table(
      matrix(grid, nrow = shape[1]),
      header = label(axes[2], seq_len(shape[2]) - 1L),
      row_labels = label(axes[1], seq_len(shape[1]) - 1L),
      sep = " ", indent = "", width = width
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
