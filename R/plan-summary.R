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
    variables = plan_count(shown$variables),
    weights = format_bytes(shown$bytes),
    "per device" = format_bytes(shown$device_bytes),
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
      sprintf("  ... and %d more rules", nrow(totals) - max_rules)
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
        plan_plural(outputs$layers[i], "layer"),
        paste(outputs$classes[[i]], collapse = ", ")), width),
        paste0("    ", truncate_right(group_listing(layers), width - 4)))
    })))
}

check_share <- function(x, arg = rlang::caller_arg(x),
                        call = rlang::caller_env()) {
  if (!is.numeric(x) || length(x) != 1 || is.na(x) || x < 0 || x > 1) {
    kerasmesh_abort(
      c("{.arg {arg}} must be a number between 0 and 1.",
        x = "Received {.obj_type_friendly {x}}{received_value(x)}."),
      kind = "argument", call = call
    )
  }
  as.numeric(x)
}
