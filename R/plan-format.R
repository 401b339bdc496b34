# Printing a layout plan: the header, the variable table, totals and
# problems, within the console width.

#' @export
format.kerasmesh_layout_plan <- function(x, ..., n = 20,
                                         width = cli::console_width()) {
  check_dots_none()
  check_plan_object(x)
  n <- check_whole(n, min = 0)
  width <- check_whole(width)
  check_unedited(x)
  with_edits_named(x, {
    summary <- attr(x, "summary")
    rows <- nrow(x)
    header <- sprintf("<kerasmesh_layout_plan> %s on %s",
                      count_text(rows, "variable"),
                      mesh_phrase(attr(x, "mesh")))
    out <- header
    prefix <- path_prefix(x$path)
    if (nzchar(prefix)) {
      out <- c(out, sprintf('Paths below "%s":', prefix))
    }
    if (rows > 0) {
      if (n > 0) {
        shown <- x[seq_len(min(rows, n)), , drop = FALSE]
        out <- c(out, format_plan_table(shown, attr(x, "problems"), width,
                                        prefix))
      }
      if (rows > n) {
        out <- c(out, paste("  ... and", count_text(rows - n, "more variable")))
      }
    }
    c(out, format_plan_totals(summary), format_plan_outputs(x, width),
      format_plan_problems(x, width))
  })
}

#' @export
print.kerasmesh_layout_plan <- function(x, ...) {
  writeLines(format(x, ...))
  invisible(x)
}

format_plan_table <- function(x, problems, width, prefix = "") {
  marked <- function(severity) {
    problems$path[!is.na(problems$path) & problems$severity == severity]
  }
  status <- ifelse(x$path %in% marked("error"), "x",
                   ifelse(x$path %in% marked("warning"), "!", " "))
  rule <- ifelse(is.na(x$rule), "-", x$rule)
  paths <- substring(x$path, nchar(prefix) + 1)
  cols <- data.frame(
    shape = vapply(x$shape, format_dims, ""),
    axes = vapply(x$axes, format_axes_short, ""),
    shard = vapply(x$shard_shape, format_dims, ""),
    per_device = bytes_text(x$device_bytes),
    stringsAsFactors = FALSE
  )
  path_width <- max(nchar(c("path", paths)))
  rule_width <- max(nchar(c("rule", rule)))
  # Two spaces of margin, and two between columns (status, path, rule and
  # `cols`). The axes column goes first (the shard shape shows the split),
  # then paths shrink, then rules.
  excess <- function(cols) {
    widths <- pmax(vapply(cols, function(c) max(nchar(c)), 1),
                   nchar(names(cols)))
    2 + 1 + path_width + rule_width + sum(widths) + 2 * (ncol(cols) + 2) -
      width
  }
  if (excess(cols) > 0) {
    cols$axes <- NULL
  }
  over <- excess(cols)
  show_rule <- TRUE
  if (over > 0) {
    # Rules shrink first (their start says which one), then paths (cut in
    # the middle, so block numbers and the variable's name stay). When
    # paths would still be cut short, the rule column goes: summary() has
    # the rules.
    cut <- min(over, max(0, rule_width - 14))
    if (path_width - (over - cut) < min(path_width, 36)) {
      show_rule <- FALSE
      over <- over - rule_width - 2
    } else {
      rule_width <- rule_width - cut
      over <- over - cut
    }
    path_width <- max(20, path_width - max(0, over))
  }
  table <- data.frame(" " = status, path = truncate_path(paths, path_width),
                      check.names = FALSE, stringsAsFactors = FALSE)
  if (show_rule) {
    table$rule <- truncate_right(rule, rule_width)
  }
  table <- cbind(table, cols)
  format_table(table, right = "per_device")
}

format_plan_totals <- function(s) {
  with <- if (is.null(s$optimizer)) {
    "with gradients (no optimizer given)"
  } else {
    sprintf("with gradients and %s slots", s$optimizer)
  }
  c(
    sprintf("Parameters: %s (%s)", format_whole(s$parameters),
            bytes_text(s$bytes)),
    sprintf("Per device: %s of weights, %s %s",
            bytes_text(s$device_weights), bytes_text(s$device_total),
            with),
    sprintf("Replicated: %s of weights, %s %s",
            bytes_text(s$replicated_weights),
            bytes_text(s$replicated_total), with)
  )
}

format_plan_problems <- function(x, width) {
  problems <- attr(x, "problems")
  if (is.null(problems) || nrow(problems) == 0) {
    return("Problems: none")
  }
  n_err <- sum(problems$severity == "error")
  n_warn <- sum(problems$severity == "warning")
  c(
    sprintf("Problems: %s, %s (details: check_layout())",
            count_text(n_err, "error"), count_text(n_warn, "warning")),
    format_plan_groups(attr(x, "groups"), width)
  )
}
