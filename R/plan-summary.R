# Totals per rule and rules for layer outputs, for summary() and print() of
# a layout plan.

# One row per rule that decides some variable's layout, then the variables
# no rule matches: how many, their parameters, their bytes in all and on
# one device, and that device's share.
plan_rule_totals <- function(plan) {
  rule <- ifelse(is.na(plan$rule), "(no rule)", plan$rule)
  rule <- factor(rule, levels = unique(rule))
  params <- vapply(plan$shape, function(s) prod(as.numeric(s)), 1)
  total <- function(v) as.numeric(tapply(v, rule, sum))
  device <- total(plan$device_bytes)
  out <- data.frame(
    rule = levels(rule),
    variables = as.integer(tapply(plan$path, rule, length)),
    parameters = total(params),
    bytes = total(plan$bytes),
    device_bytes = device,
    device_share = if (sum(device) > 0) device / sum(device) else device,
    stringsAsFactors = FALSE
  )
  out[out$variables > 0 | is.na(out$variables), , drop = FALSE]
}

format_rule_totals <- function(totals, width = cli::console_width(),
                               max_rules = 12) {
  if (is.null(totals) || nrow(totals) == 0) {
    return(character())
  }
  order <- order(totals$device_bytes, decreasing = TRUE)
  shown <- totals[utils::head(order, max_rules), , drop = FALSE]
  table <- data.frame(
    rule = shown$rule,
    variables = format_whole(shown$variables),
    weights = bytes_text(shown$bytes),
    "per device" = bytes_text(shown$device_bytes),
    share = sprintf("%.0f%%", 100 * shown$device_share),
    check.names = FALSE, stringsAsFactors = FALSE
  )
  others <- sum(vapply(names(table)[-1], function(n) {
    max(nchar(c(n, table[[n]])))
  }, 1))
  rest <- width - 2 - others - 2 * (ncol(table) - 1)
  table$rule <- truncate_right(table$rule, max(12, rest))
  c("Per rule (weights in all and on each device):",
    format_table(table, right = c("variables", "weights", "per device",
                                  "share")),
    if (nrow(totals) > max_rules) {
      paste("  ... and", count_text(nrow(totals) - max_rules, "more rule"))
    })
}

# "Output rules:" with the layers each applies to.
format_plan_outputs <- function(x, width = cli::console_width()) {
  outputs <- attr(x, "outputs")
  if (is.null(outputs) || nrow(outputs) == 0) {
    return(character())
  }
  c("Rules for layer outputs:",
    unlist(lapply(seq_len(nrow(outputs)), function(i) {
      layers <- outputs$listing[[i]]
      c(truncate_right(sprintf(
        '  "%s": %s (%s)', outputs$key[i],
        count_text(outputs$layers[i], "layer"),
        paste(outputs$classes[[i]], collapse = ", ")), width),
        paste0("    ", truncate_right(group_listing(layers), width - 4)))
    })))
}


#' @export
summary.kerasmesh_layout_plan <- function(object, ...) {
  check_dots_none()
  check_plan_object(object, prefix = "object")
  check_unedited(object, prefix = "object")
  with_edits_named(object, {
    s <- attr(object, "summary")
    problems <- attr(object, "problems")
    stamp_fields(structure(
      c(s, list(
        mesh = attr(object, "mesh"),
        rules = attr(object, "rules"),
        by_rule = plan_rule_totals(object),
        outputs = attr(object, "outputs"),
        errors = sum(problems$severity == "error"),
        warnings = sum(problems$severity == "warning")
      )),
      class = "kerasmesh_layout_plan_summary"
    ))
  }, prefix = "object")
}

#' @export
format.kerasmesh_layout_plan_summary <- function(x, ...) {
  check_dots_none()
  check_unedited(x)
  with_edits_named(x, {
    rules <- x$rules
    unmatched <- x$unmatched
    c(
      sprintf("<kerasmesh_layout_plan_summary> model \"%s\"", x$model),
      sprintf("Mesh:        %s", mesh_summary(x$mesh)),
      sprintf("Variables:   %s (%s trainable), %s",
              format_whole(x$variables), format_whole(x$trainable),
              count_text(nrow(rules), "rule")),
      sprintf("Parameters:  %s (%s%s)", format_whole(x$parameters),
              bytes_text(x$bytes),
              if (length(x$dtypes)) paste0(" in ", toString(x$dtypes)) else ""),
      "Memory:",
      format_plan_memory(x),
      if (is.null(x$optimizer)) {
        "  No optimizer given: pass `optimizer` to count its slots."
      },
      sprintf("Batch:       %s", format_plan_batch(x)),
      sprintf("Unmatched:   %s", if (length(unmatched)) {
        paste0('"', unmatched, '"', collapse = ", ")
      } else {
        "none"
      }),
      sprintf("Problems:    %s, %s", count_text(x$errors, "error"),
              count_text(x$warnings, "warning")),
      format_rule_totals(x$by_rule),
      if (!is.null(x$outputs) && nrow(x$outputs) > 0) {
        sprintf("Output rules: %s", paste0(
          '"', x$outputs$key, '" (', x$outputs$layers, " layers)",
          collapse = ", "))
      }
    )
  })
}

#' @export
print.kerasmesh_layout_plan_summary <- function(x, ...) {
  writeLines(format(x, ...))
  invisible(x)
}

format_plan_memory <- function(x) {
  slots <- if (is.null(x$optimizer)) {
    NULL
  } else {
    sprintf("+ %s slots (%s per variable)", x$optimizer,
            format(x$slots, digits = 3))
  }
  labels <- c("weights", "+ gradients", slots)
  device <- c(x$device_weights, x$device_weights + x$device_gradients,
              if (!is.null(slots)) x$device_total)
  replicated <- c(x$replicated_weights,
                  x$replicated_weights + x$replicated_gradients,
                  if (!is.null(slots)) x$replicated_total)
  table <- data.frame(
    " " = labels, "per device" = bytes_text(device),
    "fully replicated" = bytes_text(replicated),
    check.names = FALSE, stringsAsFactors = FALSE
  )
  format_table(table, right = c("per device", "fully replicated"))
}

format_plan_batch <- function(x) {
  if (is.null(x$batch_size)) {
    return(sprintf('split over "%s" (%s); no batch size given',
                   x$batch_dim_name, ways_text(x$batch_ways)))
  }
  sprintf('%d split over "%s" (%s): %s per device', x$batch_size,
          x$batch_dim_name, ways_text(x$batch_ways),
          if (is.null(x$device_batch)) "?" else format(x$device_batch))
}
