#' Picture which device holds which block of a variable
#'
#' Works out how a variable (or any tensor) is cut into blocks on a device
#' mesh, and which devices hold each block, then draws it: as a box grid in
#' the console (`print()`) or as a figure (`plot()`). The blocks come from
#' JAX itself (`NamedSharding.devices_indices_map()`), computed from the
#' mesh, the layout and the shape alone: nothing is allocated, so a planned
#' 16000 x 64000 kernel draws as fast as a placed 32 x 64 one.
#'
#' @section Drawing:
#' The tensor is drawn as a rectangle cut into its blocks, in proportion to
#' its dimensions (with the aspect ratio kept between 1:5 and 5:1 so thin
#' tensors stay readable). Each block is labelled with every device that
#' holds it: replicas are listed together. The last two dimensions form the
#' grid, rows then columns; a 1-D tensor is one row of blocks. Each block
#' along the leading dimensions of a 3-D or 4-D (or higher) tensor becomes
#' a panel of its own, headed by its R index, such as `[1:4, , ]`; leading
#' dimensions that are not split give a single panel. Index ranges are R's:
#' 1-based and inclusive, so `17:32` is what `x[, 17:32]` would take.
#'
#' In the console the grid uses box-drawing characters when
#' [cli::is_utf8_output()] is true and `+`, `-` and `|` otherwise, and
#' splits wide grids into bands of columns that fit `width`.
#'
#' @param x What to picture:
#'   * a Keras model, with `path`: the placed variable, read from its JAX
#'     array's own sharding;
#'   * a [variable_sharding()] report, with `path`;
#'   * a [layout_plan()], with `path`: the planned layout, nothing
#'     allocated;
#'   * a [layout_map()], with `path` and `shape`: the rule that `path`
#'     matches (no rule: replicated);
#'   * a [device_mesh()], with `axes` and `shape`.
#' @param path A variable path such as `"sequential/dense/kernel"`, or a
#'   unique ending of one after a `/` (`"dense/kernel"`). May be omitted
#'   when a report or plan has a single variable. For a mesh, only a label
#'   for the picture.
#' @param shape The tensor's shape: whole numbers, or a keras3 `shape()`.
#' @param axes The layout: for each dimension the mesh axis it is split
#'   over, `NA` when not split, in any form [layout_map()] takes (such as
#'   `c(NA, "model")` or `tuple(NULL, "model")`), and checked the same way.
#'   Shorter layouts are padded with `NA`, as Keras pads them.
#' @param dtype The data type, for the byte counts.
#' @param mesh For a [variable_sharding()] report: the mesh its variables
#'   are placed on. The report records it (attribute `"mesh"`); pass it for
#'   a data frame that lacks it.
#' @param ... Not used.
#' @return A `kerasmesh_sharding_picture`: a list with `path`, `source`
#'   (`"placed"` or `"planned"`), `shape`, `dtype`, `axes`, `shard_shape`,
#'   `copies`, `bytes`, `device_bytes`, `start` and `stop` (matrices with a
#'   row per block and a column per dimension: 0-based starts and exclusive
#'   stops, as in Python), `devices` (a list: the devices holding each
#'   block) and `mesh`. `format()` gives the console rendering, `print()`
#'   writes it and `plot()` draws the figure; both return `x` invisibly.
#' @seealso [plot.kerasmesh_device_mesh()] for the mesh itself,
#'   [plot.kerasmesh_layout_plan()] for memory per device.
#' @export
#' @examplesIf keras_available()
#' simulate_devices(8)
#' mesh <- device_mesh(c(data = 2, model = 4))
#' # The book's kernel, never allocated: 4 column blocks, each on 2 devices.
#' kernel <- sharding_picture(mesh, axes = c(NA, "model"),
#'                            shape = c(16000, 64000))
#' kernel
#' plot(kernel)
#' # A 3-D variable: one panel per block of the first dimension.
#' sharding_picture(mesh, axes = c("data", NA, "model"), shape = c(4, 8, 32))
#' lm <- layout_map(mesh, ".*kernel" = c(NA, "model"))
#' sharding_picture(lm, "sequential/dense/kernel", shape = c(32, 64))
sharding_picture <- function(x, ...) {
  UseMethod("sharding_picture")
}

#' @rdname sharding_picture
#' @export
sharding_picture.default <- function(x, path, ...) {
  if (!inherits(x, "python.builtin.object")) {
    kerasmesh_abort(
      c("{.arg x} must be a Keras model, a sharding report, a layout plan,
         a layout map or a device mesh.",
        x = "Received {.obj_type_friendly {x}}."),
      kind = "argument"
    )
  }
  new_sharding_picture(shim_call("blocks.variable_blocks", x,
                                 check_string(path)))
}

#' @rdname sharding_picture
#' @export
sharding_picture.kerasmesh_device_mesh <- function(x, axes, shape,
                                                   dtype = "float32", ...,
                                                   path = NULL) {
  mesh_picture(x, axes, shape, dtype, path)
}

#' @rdname sharding_picture
#' @export
sharding_picture.kerasmesh_layout_map <- function(x, path, shape,
                                                  dtype = "float32", ...) {
  axes <- x[[check_string(path)]]
  shape <- as_tensor_shape(shape)
  sharding_picture(.subset2(x, "mesh"),
                   axes = axes %||% rep(NA_character_, length(shape)),
                   shape = unlist(shape), dtype = dtype, path = path)
}

#' @rdname sharding_picture
#' @export
sharding_picture.kerasmesh_layout_plan <- function(x, path = NULL, ...) {
  row <- picture_row(x, path)
  sharding_picture(attr(x, "mesh"), axes = x$axes[[row]],
                   shape = x$shape[[row]], dtype = x$dtype[[row]],
                   path = x$path[[row]])
}

#' @rdname sharding_picture
#' @export
sharding_picture.kerasmesh_sharding <- function(x, path = NULL, ...,
                                                mesh = attr(x, "mesh")) {
  row <- picture_row(x, path)
  if (is.null(mesh)) {
    kerasmesh_abort(
      c("Can't picture {.val {x$path[[row]]}} without its mesh.",
        x = "This sharding report does not record the mesh.",
        i = "Pass {.arg mesh}, or picture the model itself:
             {.code sharding_picture(model, path)}."),
      kind = "device_mesh"
    )
  }
  # JAX may have placed an array over several axes on one dimension
  # ("data+model"), which a layout can't ask for but a picture can show.
  picture <- mesh_picture(as_device_mesh(mesh), x$axes[[row]],
                          x$shape[[row]], x$dtype[[row]], x$path[[row]],
                          several = TRUE)
  picture$source <- "placed"
  picture
}

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

#' @rdname sharding_picture
#' @param main A title; `NULL` for the variable's path and shape.
#' @export
plot.kerasmesh_sharding_picture <- function(x, ..., main = NULL) {
  draw_sharding_picture(x, main = main)
  invisible(x)
}

#' @rdname sharding_picture
#' @export
plot.kerasmesh_sharding <- function(x, path = NULL, ...,
                                    mesh = attr(x, "mesh")) {
  plot(sharding_picture(x, path = path, mesh = mesh), ...)
  invisible(x)
}

# -- building the picture -----------------------------------------------------

mesh_picture <- function(mesh, axes, shape, dtype, path, several = FALSE,
                         call = rlang::caller_env()) {
  new_sharding_picture(shim_call(
    "blocks.sharding_blocks", .subset2(mesh, "py"),
    axes_for_shim(axes, arg = "axes", call = call),
    as_tensor_shape(shape, call = call), check_string(dtype, call = call),
    path, several, call = call
  ))
}

new_sharding_picture <- function(desc) {
  shape <- whole_numbers(desc$shape)
  rank <- length(shape)
  blocks <- desc$blocks
  as_matrix <- function(rows) {
    matrix(as.numeric(unlist(rows)), nrow = length(rows), ncol = rank,
           byrow = TRUE)
  }
  structure(
    list(
      path = desc$path %||% NA_character_,
      source = desc$source,
      shape = shape,
      dtype = desc$dtype,
      axes = axes_from_python(desc$axes),
      shard_shape = whole_numbers(desc$shard_shape),
      copies = as.integer(desc$copies),
      bytes = as.numeric(desc$bytes),
      device_bytes = as.numeric(desc$device_bytes),
      start = as_matrix(blocks$start),
      stop = as_matrix(blocks$stop),
      devices = lapply(blocks$devices, function(d) as.character(unlist(d))),
      mesh = if (!is.null(desc$mesh)) new_device_mesh(desc$mesh)
    ),
    class = "kerasmesh_sharding_picture"
  )
}

# The row of a report or plan that `path` names: exactly, or as the one
# path ending in "/<path>".
picture_row <- function(x, path, call = rlang::caller_env()) {
  paths <- x$path
  if (is.null(path)) {
    if (length(paths) == 1) {
      return(1L)
    }
    kerasmesh_abort(
      c("{.arg path} must name one of the {length(paths)} variables.",
        i = "Paths: {.val {utils::head(paths, 6)}}{if (length(paths) > 6)
             ', ...' else ''}."),
      kind = "variable_path", call = call
    )
  }
  path <- check_string(path, call = call)
  row <- which(paths == path)
  if (length(row) == 0) {
    row <- which(endsWith(paths, paste0("/", path)))
  }
  if (length(row) == 1) {
    return(row)
  }
  candidates <- if (length(row) > 1) paths[row] else
    paths[agrepl(path, paths, max.distance = 0.2, fixed = TRUE)]
  kerasmesh_abort(
    c("{.arg path} must name one variable.",
      x = if (length(row) > 1) {
        "{length(row)} paths end with {.val {paste0('/', path)}}."
      } else {
        "No variable has path {.val {path}}."
      },
      i = if (length(candidates)) {
        "Did you mean {.or {.val {utils::head(candidates, 3)}}}?"
      }),
    kind = "variable_path", call = call
  )
}

as_tensor_shape <- function(shape, call = rlang::caller_env()) {
  if (inherits(shape, "keras_shape")) {
    shape <- unlist(lapply(unclass(shape), function(s) s %||% NA))
  }
  if (!is.numeric(shape) || anyNA(shape) || any(shape < 0) ||
      any(shape != round(shape))) {
    kerasmesh_abort(
      c("{.arg shape} must be whole numbers, one per dimension.",
        x = "Received {.obj_type_friendly {shape}}{received_value(shape)}."),
      kind = "shape", call = call
    )
  }
  as.list(as.numeric(shape))
}

# -- layout shared by the console and the figure -----------------------------

# Panels (one per block of the leading dimensions), each a matrix of block
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
  sprintf("%s %s%s", format_count(n), word, if (n == 1) "" else "s")
}

# -- console rendering --------------------------------------------------------

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

# -- figure -------------------------------------------------------------------

draw_sharding_picture <- function(x, main = NULL) {
  layout <- picture_layout(x)
  rank <- length(x$shape)
  subtitle <- c(picture_header(x, Inf)[-1],
                if (rank > 2) sub(";.*", "", picture_roles(x)))
  dim_title <- function(d) {
    size <- format_count(x$shape[[d]])
    c(sprintf("dimension %d (%s)", d, size), sprintf("dim %d (%s)", d, size),
      sprintf("dim %d", d))
  }
  plot_page(main %||% picture_title(x), subtitle)
  fills <- seq_fills(length(x$devices))
  panels <- layout$panels
  aspect <- function(panel) {
    ratio <- if (rank == 0) {
      1
    } else if (rank == 1) {
      0.2
    } else {
      sum(panel$row_sizes) / sum(panel$col_sizes)
    }
    min(max(ratio, 0.2), 5)
  }
  draw_panels(length(panels), function(p) {
    panel <- panels[[p]]
    cells <- panel$cells
    labels <- matrix(lapply(cells, function(i) {
      if (is.na(i)) character() else x$devices[[i]]
    }), nrow(cells))
    draw_labelled_grid(
      labels = labels, fills = matrix(fills[cells], nrow(cells)),
      col_sizes = panel$col_sizes, row_sizes = panel$row_sizes,
      col_labels = panel$col_labels,
      row_labels = if (rank >= 2) panel$row_labels,
      col_title = if (rank >= 1) dim_title(rank),
      row_title = if (rank >= 2) dim_title(rank - 1),
      heading = panel$label, aspect = aspect(panel)
    )
  }, ncol = picture_columns(length(panels), aspect(panels[[1]])))
  grid::popViewport(0)
}
