# The layout that a sharding picture's console grid and its figure share:
# panels of shard numbers, their index ranges and the picture's title.

# Panels (one per shard of the leading dimensions), each a matrix of shard
# numbers with row and column labels: R index ranges along the last two
# dimensions.
picture_layout <- function(x) {
  rank <- length(x$shape)
  n <- max(nrow(x$start), length(x$devices))
  if (rank == 0) {
    cells <- matrix(1L, 1, 1)
    return(list(rows = NULL, cols = NULL, panels = list(list(
      label = NULL, cells = cells, row_labels = "", col_labels = "",
      row_sizes = 1, col_sizes = 1
    ))))
  }
  row_dim <- if (rank >= 2) rank - 1L else NA_integer_
  col_dim <- rank
  lead <- seq_len(max(rank - 2L, 0L))
  key <- function(dims, i) {
    if (length(dims) == 0) "" else
      paste(x$start[i, dims], x$stop[i, dims], collapse = ",")
  }
  ranges <- function(dim) {
    starts <- sort(unique(x$start[, dim]))
    stops <- vapply(starts, function(s) x$stop[match(s, x$start[, dim]), dim],
                    numeric(1))
    list(start = starts, stop = stops, label = index_range(starts, stops))
  }
  cols <- ranges(col_dim)
  rows <- if (is.na(row_dim)) {
    list(start = 0, stop = 1, label = "")
  } else {
    ranges(row_dim)
  }
  panel_keys <- vapply(seq_len(n), function(i) key(lead, i), "")
  panels <- list()
  for (k in unique(panel_keys)) {
    members <- which(panel_keys == k)
    cells <- matrix(NA_integer_, length(rows$start), length(cols$start))
    for (i in members) {
      r <- if (is.na(row_dim)) 1L else match(x$start[i, row_dim], rows$start)
      cells[r, match(x$start[i, col_dim], cols$start)] <- i
    }
    label <- if (length(lead)) {
      i <- members[1]
      lead_ranges <- index_range(x$start[i, lead], x$stop[i, lead])
      paste0("[", paste(c(lead_ranges, "", ""), collapse = ", "), "]")
    }
    panels[[length(panels) + 1]] <- list(
      label = label, cells = cells,
      row_labels = rows$label, col_labels = cols$label,
      row_sizes = rows$stop - rows$start, col_sizes = cols$stop - cols$start
    )
  }
  list(rows = row_dim, cols = col_dim, panels = panels)
}

# "1:16" for the 0-based half-open range [0, 16); "5" for [4, 5).
index_range <- function(start, stop) {
  first <- format_count(start + 1)
  last <- format_count(stop)
  ifelse(stop - start == 1, last, paste0(first, ":", last))
}

format_count <- function(x) {
  format(x, scientific = FALSE, trim = TRUE, big.mark = "")
}

picture_title <- function(x) {
  if (!is.na(x$path)) {
    x$path
  } else if (length(x$shape) == 0) {
    "A scalar"
  } else {
    sprintf("Tensor of shape %s", format_dims(x$shape))
  }
}
