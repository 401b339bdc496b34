#' Fixes for a layout plan's problems, as R code
#'
#' [layout_plan()] groups its problems, one per rule and kind (a rule over
#' 18 transformer blocks that can't split their key and value kernels is
#' one problem naming 36 variables), and for some kinds it looks for a
#' change to the layout map that works:
#'
#' * a dimension its mesh axis can't divide: the rule's axes moved to
#'   dimensions they divide (or the dimension left unsplit); when only some
#'   of the rule's variables fail, the rule is split in two, one keeping
#'   its layout for the variables it suits;
#' * a big variable that no rule matches (warning
#'   `kerasmesh_warning_replicated`): a rule that splits it.
#'
#' Each fix is planned before it is offered: with it, every variable it
#' touches is placed without a problem, and every other variable keeps its
#' layout. `layout_fix()` gives the fixes as code to paste, for a
#' [layout_map()] called `name`. A Keras `LayoutMap` (such as one from a
#' keras-hub backbone's `get_layout_map()`) becomes one with
#' [as_layout_map()].
#'
#' @param plan A [layout_plan()].
#' @param name The name of the layout map in the code, a single string;
#'   a name that is not syntactic R (such as `"my map"` or `"if"`) is
#'   written in backquotes, so the code always parses.
#' @param ... Must be empty.
#' @return A character vector of R code, of class `kerasmesh_layout_fix`
#'   (printed as is); empty when there is nothing to fix or no fix was
#'   found.
#' @seealso [check_layout()], whose conditions carry the same fixes.
#' @export
#' @examplesIf keras_available()
#' simulate_devices(8)
#' mesh <- device_mesh(c(batch = 2, model = 4))
#' library(reticulate, include.only = "import")
#' keras <- import("keras")
#' build <- function() {
#'   inputs <- keras$Input(shape = list(16L))
#'   hidden <- keras$layers$Dense(64L, name = "up")(inputs)
#'   keras$Model(inputs, keras$layers$Dense(6L, name = "down")(hidden))
#' }
#' lm <- layout_map(mesh, ".*kernel" = c(NA, "model"))
#' plan <- layout_plan(build, lm)
#' layout_fix(plan)
#' lm[[".*kernel"]] <- NULL
#' lm[["up/kernel"]] <- c(NA, "model")
#' lm[["down/kernel"]] <- c("model", NA)
#' layout_plan(build, lm)
layout_fix <- function(plan, name = "lm", ...) {
  check_call()
  if (!inherits(plan, "kerasmesh_layout_plan")) {
    stop_input_type(plan, "a layout plan", show_value = FALSE,
                    way_out = "Make one with {.fn layout_plan}.")
  }
  check_plan_object(plan, prefix = "plan")
  check_unedited(plan, prefix = "plan")
  name <- code_name(check_string(name))
  groups <- attr(plan, "groups")
  fixes <- if (is.null(groups)) list() else groups$fix
  code <- unlist(lapply(fixes[!vapply(fixes, is.null, TRUE)], fix_code,
                        name = name))
  structure(code %||% character(), class = "kerasmesh_layout_fix")
}

#' @export
format.kerasmesh_layout_fix <- function(x, ...) {
  check_dots_none()
  if (length(x) == 0) "# Nothing to fix." else unclass(x)
}

#' @export
print.kerasmesh_layout_fix <- function(x, ...) {
  writeLines(format(x, ...))
  invisible(x)
}

# -- the grouped problems ---------------------------------------------------

new_plan_groups <- function(groups) {
  field <- function(name, type = character(1), na = NA_character_) {
    vapply(groups, function(g) g[[name]] %||% na, type, USE.NAMES = FALSE)
  }
  out <- data.frame(
    severity = field("severity"), kind = field("kind"), rule = field("rule"),
    count = field("count", integer(1), NA_integer_),
    dimension = field("dimension", integer(1), NA_integer_),
    size = field("size", numeric(1), NA_real_),
    axis = field("axis"),
    axis_size = field("axis_size", integer(1), NA_integer_),
    message = field("message"),
    stringsAsFactors = FALSE
  )
  out$listing <- lapply(groups, function(g) as.character(unlist(g$listing)))
  out$paths <- lapply(groups, function(g) as.character(unlist(g$paths)))
  out$bullets <- lapply(groups, function(g) {
    stats::setNames(
      vapply(g$bullets, function(b) b[[2]], character(1)),
      vapply(g$bullets, function(b) b[[1]], character(1))
    )
  })
  out$fix <- lapply(groups, function(g) {
    if (is.null(g$fix)) {
      return(NULL)
    }
    list(remove = as.character(unlist(g$fix$remove)),
         add = lapply(g$fix$add, function(a) {
           list(key = a[[1]], axes = axes_from_python(a[[2]]))
         }))
  })
  out
}

new_plan_outputs <- function(outputs) {
  out <- data.frame(
    key = vapply(outputs, function(o) o$key, ""),
    layers = vapply(outputs, function(o) as.integer(o$layers), 1L),
    stringsAsFactors = FALSE
  )
  out$classes <- lapply(outputs, function(o) as.character(unlist(o$classes)))
  out$listing <- lapply(outputs, function(o) as.character(unlist(o$listing)))
  out
}

# R code for one fix: rules removed, then rules added.
fix_code <- function(fix, name = "lm", width = 78) {
  removed <- sprintf("%s[[%s]] <- NULL", name,
                     vapply(fix$remove, deparse, ""))
  added <- vapply(fix$add, function(a) {
    target <- sprintf("%s[[%s]] <-", name, deparse(a$key))
    value <- paste(deparse(a$axes), collapse = "")
    if (nchar(target) + nchar(value) + 1 > width) {
      paste0(target, "\n  ", value)
    } else {
      paste(target, value)
    }
  }, "")
  unlist(strsplit(c(removed, added), "\n", fixed = TRUE))
}

# "decoder_block_{0..17}/attention/{key,value}/kernel" and "and N more".
group_listing <- function(listing, max = 3) {
  shown <- utils::head(listing, max)
  more <- length(listing) - length(shown)
  c(shown, if (more > 0) sprintf("and %d more", more))
}

# Lines for print(plan): one problem per rule and kind, with its fix.
format_plan_groups <- function(groups, width, max_groups = 10) {
  marks <- ifelse(groups$severity == "error", "x", "!")
  shown <- utils::head(seq_len(nrow(groups)), max_groups)
  lines <- unlist(lapply(shown, function(i) {
    g <- groups[i, , drop = FALSE]
    head <- strwrap(paste(marks[i], times_to_ascii(g$message)),
                    width = width, exdent = 2)
    what <- if (g$count > 1 || g$kind == kinds$replicated) {
      paste0("    ", truncate_right(group_listing(g$listing[[1]]),
                                    width - 4))
    }
    fix <- g$fix[[1]]
    c(head, what, if (!is.null(fix)) {
      c("  Fix (checked by the planner):", paste0("    ", fix_code(fix)))
    })
  }))
  c(lines, if (nrow(groups) > max_groups) {
    sprintf("... and %d more", nrow(groups) - max_groups)
  })
}

# The message of a condition for some groups: the first in full, with its
# fix; the others by their first line.
plan_group_message <- function(groups, max_listed = 5) {
  first <- groups[1, , drop = FALSE]
  fix <- first$fix[[1]]
  out <- c(cli_escape(first$message), cli_escape(first$bullets[[1]]),
           if (!is.null(fix)) {
             # One line per statement: cli wraps it to the console, where
             # a line we wrapped would lose its indent.
             code <- fix_code(fix, width = Inf)
             c(i = "A fix, checked by the planner ({.fn layout_fix}):",
               stats::setNames(cli_escape(code), rep(" ", length(code))))
           })
  rest <- groups$message[-1]
  if (length(rest) == 0) {
    return(out)
  }
  listed <- utils::head(rest, max_listed)
  more <- length(rest) - length(listed)
  c(out,
    i = paste0(count_text(length(rest), "more problem"), ":"),
    stats::setNames(cli_escape(listed), rep("*", length(listed))),
    if (more > 0) c("*" = sprintf("... and %d more.", more)))
}

# -- paths at scale ---------------------------------------------------------

# The leading path segments all paths share ("sequential/"), or "".
path_prefix <- function(paths) {
  if (length(paths) < 2) {
    return("")
  }
  parts <- strsplit(paths, "/", fixed = TRUE)
  dirs <- lapply(parts, function(p) p[-length(p)])
  n <- min(lengths(dirs))
  common <- 0
  for (i in seq_len(n)) {
    if (length(unique(vapply(dirs, `[[`, "", i))) != 1) break
    common <- i
  }
  if (common == 0) "" else paste0(paste(dirs[[1]][seq_len(common)],
                                        collapse = "/"), "/")
}

# Paths cut in the middle, keeping the first segment (with its block
# number) and as much of the end as fits: "decoder_block_17/.../key/kernel".
truncate_path <- function(x, width) {
  long <- nchar(x) > width
  if (!any(long)) {
    return(x)
  }
  head <- sub("/.*$", "/", x[long])
  head <- ifelse(head == x[long] | nchar(head) > width - 10,
                 substring(x[long], 1, floor((width - 3) / 2)), head)
  keep <- width - nchar(head) - 3
  tail <- substring(x[long], nchar(x[long]) - keep + 1)
  # Whole segments, where at least two of them stay.
  whole <- grepl("/.*/", tail) & nzchar(head) &
    endsWith(head, "/")
  tail[whole] <- sub("^[^/]*/", "", tail[whole])
  x[long] <- paste0(head, "...", ifelse(whole, "/", ""), tail)
  x
}

signal_plan_problems <- function(plan, call = rlang::caller_env()) {
  problems <- attr(plan, "problems")
  groups <- attr(plan, "groups")
  warnings <- problems[problems$severity == "warning", , drop = FALSE]
  for (kind in unique(warnings$kind)) {
    these <- warnings[warnings$kind == kind, , drop = FALSE]
    grouped <- groups[groups$severity == "warning" & groups$kind == kind, ,
                      drop = FALSE]
    cli::cli_warn(
      plan_group_message(grouped),
      class = warning_classes(c(kind, kinds$layout_plan)),
      plan = plan, problems = these, groups = grouped
    )
  }
  errors <- problems[problems$severity == "error", , drop = FALSE]
  if (nrow(errors) > 0) {
    grouped <- groups[groups$severity == "error", , drop = FALSE]
    cli::cli_abort(
      plan_group_message(grouped),
      class = error_classes(c(unique(errors$kind), kinds$layout_plan)),
      plan = plan, problems = errors, groups = grouped, call = call
    )
  }
  invisible(plan)
}

new_plan_problems <- function(problems) {
  field <- function(name) {
    vapply(problems, function(p) p[[name]] %||% NA_character_, character(1))
  }
  out <- data.frame(
    severity = field("severity"), kind = field("kind"), path = field("path"),
    rule = field("rule"), message = field("message"),
    stringsAsFactors = FALSE
  )
  out$bullets <- lapply(problems, function(p) {
    stats::setNames(
      vapply(p$bullets, function(b) b[[2]], character(1)),
      vapply(p$bullets, function(b) b[[1]], character(1))
    )
  })
  out
}
