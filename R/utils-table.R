# The console table renderer: every table kerasmesh prints (data frames of
# a plan or a cost, device grids, the box grids of a sharding picture) is
# laid out here.

# A table as lines. `x` is a data frame or a character matrix; a cell may
# hold several lines, separated by "\n". Options:
# - `header`: column labels, a line above the rows (none where they are
#   `NULL` or empty);
# - `row_labels`: a label before each row, left-aligned, then `label_sep`;
# - `right`: the columns (names in `header`, or numbers) aligned right;
#   the others are aligned left;
# - `min_width`: the least width of every column;
# - `sep`: what separates columns (without `box`);
# - `label_sep`: what follows the row labels;
# - `box`: rule the cells with box-drawing characters (`box_chars()`);
# - `indent`: what starts every line: two spaces, as the tables in a
#   print-out sit under their heading;
# - `width`: columns that do not fit go to further bands of columns, after
#   a blank line, each with the header and row labels again.
# Lines end without spaces, except the rows of a box.
format_table <- function(x, header = colnames(x), row_labels = NULL,
                         right = character(), min_width = 0, sep = "  ",
                         label_sep = "  ", box = FALSE, indent = "  ",
                         width = Inf) {
  columns <- table_columns(x)
  cells <- lapply(columns, strsplit_lines)
  widths <- pmax(min_width, table_widths(cells, header))
  if (is.character(right)) {
    right <- which(header %in% right)
  }
  label_w <- if (is.null(row_labels)) 0 else max(nchar(row_labels), 0)
  layout <- list(
    n_rows = if (length(columns)) length(columns[[1]]) else
      length(row_labels),
    row_labels = row_labels, label_w = label_w, label_sep = label_sep,
    sep = sep, indent = indent, borders = if (box) box_chars()
  )
  right <- seq_along(columns) %in% right
  budget <- width - margin_width(layout)
  bands <- if (box) {
    # A box row is "| " + cells joined by " | " + " |".
    split_columns(widths, budget - 4, gap = 3)
  } else {
    split_columns(widths, budget, gap = nchar(sep))
  }
  out <- character()
  for (cols in bands) {
    band <- table_band(cells[cols], header[cols], widths[cols], right[cols],
                       layout)
    out <- c(out, if (length(out)) "", band)
  }
  out
}

# The columns of a data frame or matrix as character vectors, as `c()`
# would make them, with "NA" for missing values.
table_columns <- function(x) {
  columns <- if (is.data.frame(x)) {
    lapply(unname(as.list(x)), function(col) c(character(), col))
  } else {
    lapply(seq_len(ncol(x)), function(j) as.character(x[, j]))
  }
  lapply(columns, function(col) replace(col, is.na(col), "NA"))
}

# Each cell as its lines ("" for none).
strsplit_lines <- function(x) {
  lines <- strsplit(x, "\n", fixed = TRUE)
  lines[lengths(lines) == 0] <- ""
  lines
}

table_widths <- function(cells, header) {
  w <- vapply(cells, function(col) max(nchar(unlist(col)), 0), numeric(1))
  if (!is.null(header)) {
    w <- pmax(w, nchar(header))
  }
  w
}

# One band of columns: the header and the rows, a row as tall as its
# tallest cell.
table_band <- function(cells, header, widths, right, layout) {
  body <- lapply(seq_len(layout$n_rows), function(r) {
    row <- lapply(cells, `[[`, r)
    height <- max(lengths(row), 1)
    lines <- vapply(seq_len(height), function(l) {
      texts <- vapply(row, function(text) {
        if (l <= length(text)) text[[l]] else ""
      }, "")
      table_line(texts, widths, right, layout)
    }, "")
    with_row_label(lines, c(layout$row_labels[r], rep("", height - 1)),
                   layout)
  })
  if (!any(nzchar(header))) {
    header <- NULL
  }
  if (!is.null(layout$borders)) {
    return(boxed_band(body, header, widths, layout))
  }
  head <- if (!is.null(header)) {
    with_row_label(table_line(header, widths, right, layout), "", layout)
  }
  c(head, unlist(body))
}

# One line of a row: the cells' texts padded and joined by `sep`, or
# between borders.
table_line <- function(texts, widths, right, layout) {
  padded <- vapply(seq_along(texts), function(j) {
    if (right[j]) pad_left(texts[j], widths[j]) else
      pad_right(texts[j], widths[j])
  }, "")
  v <- layout$borders$v
  if (is.null(v)) {
    return(sub("\\s+$", "", paste(padded, collapse = layout$sep)))
  }
  paste0(v, " ", paste(padded, collapse = paste0(" ", v, " ")), " ", v)
}

# Rows of a box band between rules, under the header.
boxed_band <- function(body, header, widths, layout) {
  b <- layout$borders
  margin <- strrep(" ", margin_width(layout))
  rule <- function(left, mid, right) {
    paste0(margin, left, paste(strrep(b$h, widths + 2), collapse = mid),
           right)
  }
  head <- if (!is.null(header)) {
    sub("\\s+$", "", paste0(margin, " ", paste(
      pad_right(header, widths + 2), collapse = " "
    )))
  }
  out <- c(head, rule(b$tl, b$tm, b$tr))
  for (r in seq_along(body)) {
    out <- c(out, body[[r]], if (r < length(body)) {
      rule(b$ml, b$mm, b$mr)
    } else {
      rule(b$bl, b$bm, b$br)
    })
  }
  out
}

# Lines after their row label (when the table has row labels) and the
# indent; lines of a plain table lose trailing spaces first.
with_row_label <- function(lines, label, layout) {
  if (!is.null(layout$row_labels)) {
    lines <- paste0(pad_right(label, layout$label_w), layout$label_sep,
                    lines)
    if (is.null(layout$borders)) {
      lines <- sub("\\s+$", "", lines)
    }
  }
  paste0(layout$indent, lines)
}

# The width of the indent and the row labels.
margin_width <- function(layout) {
  labels <- if (is.null(layout$row_labels)) 0 else
    layout$label_w + nchar(layout$label_sep)
  nchar(layout$indent) + labels
}

pad_right <- function(x, width) {
  paste0(x, strrep(" ", pmax(0, width - nchar(x))))
}

pad_left <- function(x, width) {
  paste0(strrep(" ", pmax(0, width - nchar(x))), x)
}

# Columns of widths `col_width` in bands, greedily, each within `width`
# with `gap` characters between columns; a band has at least one column.
split_columns <- function(col_width, width, gap = 1) {
  bands <- list()
  current <- integer()
  used <- 0
  for (i in seq_along(col_width)) {
    need <- col_width[i] + gap * (length(current) > 0)
    if (length(current) > 0 && used + need > width) {
      bands <- c(bands, list(current))
      current <- integer()
      need <- col_width[i]
      used <- 0
    }
    current <- c(current, i)
    used <- used + need
  }
  c(bands, list(current))
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
