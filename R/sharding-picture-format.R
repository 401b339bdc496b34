# The console picture of a sharding: a header, the roles of the mesh axes
# and box grids of shards, within the console width.

#' @rdname sharding_picture
#' @param width For `format()`: the console width to fit (at least 40:
#'   a narrower width is taken as 40).
#' @export
format.kerasmesh_sharding_picture <- function(x, ...,
                                              width = cli::console_width()) {
  check_dots_none()
  width <- max(check_whole(width), 40)
  check_unedited(x)
  with_edits_named(x, {
    layout <- picture_layout(x)
    out <- c(picture_header(x, width), picture_roles(x))
    for (panel in layout$panels) {
      out <- c(out, "", if (!is.null(panel$label)) c(panel$label, ""),
               format_shard_grid(panel$cells, x$devices, panel$row_labels,
                                 panel$col_labels, width))
    }
    out
  })
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
  n_shards <- length(x$devices)
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
  shards <- if (n_shards == 1) {
    sprintf("1 shard, on %s", plural_count(x$copies, "device"))
  } else {
    sprintf("%d shards of %s, each on %s", n_shards,
            format_dims(x$shard_shape), plural_count(x$copies, "device"))
  }
  lines <- c(
    sprintf("%s %s%s, %s", shape, x$dtype, layout, source),
    where,
    sprintf("%s: %s of %s per device", shards, bytes_text(x$device_bytes),
            bytes_text(x$bytes))
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

# A box grid of shards, each cell listing its devices, in bands of columns
# that fit `width`.
format_shard_grid <- function(cells, devices, row_labels, col_labels,
                              width = 80) {
  has_rows <- any(nzchar(row_labels))
  row_w <- if (has_rows) max(nchar(row_labels)) + 1 else 0
  available <- width - row_w
  shown <- devices[cells[!is.na(cells)]]
  longest <- max(nchar(unlist(shown)), nchar(col_labels), 1)
  natural <- max(nchar(vapply(shown, paste, "", collapse = " ")),
                 nchar(col_labels))
  per_col <- floor((available - 1) / ncol(cells)) - 3
  inner <- max(longest, min(natural, per_col))
  text <- matrix(vapply(cells, function(i) {
    if (is.na(i)) "" else paste(wrap_words(devices[[i]], inner),
                                collapse = "\n")
  }, ""), nrow = nrow(cells))
  format_table(text, header = col_labels,
               row_labels = if (has_rows) row_labels, label_sep = " ",
               min_width = inner, box = TRUE, indent = "", width = width)
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
