# One concept, one name: vignette("vocabulary") lists each concept's one
# argument name and the names it must not have, and every rename. These
# tests read those tables and walk the formals of every exported function
# and of the methods of kerasmesh's classes; the last ones run the checks
# on small made-up functions and see each rule fail.

vocabulary_note <- function() {
  path <- file.path(dirname(source_dir()), "vignettes", "vocabulary.Rmd")
  if (!file.exists(path)) {
    skip("the vocabulary note is not next to the package's sources")
  }
  readLines(path, encoding = "UTF-8")
}

# The markdown table that follows the line matching `marker`, as a
# character matrix (one row per table row, header and rule left out).
note_table <- function(lines, marker) {
  start <- grep(marker, lines, fixed = TRUE)
  stopifnot(length(start) == 1)
  rows <- character()
  for (line in lines[-seq_len(start)]) {
    if (startsWith(line, "|")) {
      rows <- c(rows, line)
    } else if (length(rows)) {
      break
    }
  }
  cells <- lapply(rows[-(1:2)], function(r) {
    trimws(strsplit(sub("^[|]", "", sub("[|]\\s*$", "", r)), "|",
                    fixed = TRUE)[[1]])
  })
  do.call(rbind, cells)
}

# The names in backticks in a cell: "`device_memory`, `limit`" ->
# c("device_memory", "limit"); "`layout_plan()`" -> "layout_plan".
ticked <- function(cell) {
  found <- regmatches(cell, gregexpr("`[^`]+`", cell))[[1]]
  sub("[(][)]$", "", gsub("`", "", found))
}

# The argument table: list(name = , not = ) per concept.
argument_table <- function(lines = vocabulary_note()) {
  table <- note_table(lines, "test-vocabulary.R reads this table:")
  lapply(seq_len(nrow(table)), function(i) {
    list(concept = table[i, 1], name = ticked(table[i, 2]),
         not = ticked(table[i, 3]))
  })
}

# The renames table: a data frame of function, old, new.
rename_table <- function(lines = vocabulary_note()) {
  table <- note_table(lines, "test-vocabulary.R reads this table too")
  data.frame(fn = vapply(table[, 1], ticked, ""),
             old = vapply(table[, 2], ticked, ""),
             new = vapply(table[, 3], ticked, ""),
             row.names = NULL, stringsAsFactors = FALSE)
}

# The functions users call: the exports, and every S3 method the
# namespace registers (format(), plot(), sharding_picture(), ... of
# kerasmesh's classes).
user_functions <- function() {
  ns <- asNamespace("kerasmesh")
  registered <- ns[[".__NAMESPACE__."]][["S3methods"]]
  methods <- paste(registered[, 1], registered[, 2], sep = ".")
  names <- sort(unique(c(getNamespaceExports(ns), methods)))
  fns <- mget(names, envir = ns, ifnotfound = list(NULL))
  fns[vapply(fns, is.function, TRUE)]
}

is_deprecated_default <- function(default) {
  is.call(default) && identical(default[[1]], as.name("deprecated"))
}

# What breaks the note's rules among `functions` (a named list): a name
# the note says a concept must not have, unless it is a deprecated alias
# (default `deprecated()`) beside the concept's name; and every deprecated
# argument a row of `renames`, every row such an argument.
vocabulary_problems <- function(functions, table, renames) {
  problems <- character()
  found <- character()
  for (fn in names(functions)) {
    args <- formals(functions[[fn]])
    for (arg in names(args)) {
      deprecated <- is_deprecated_default(args[[arg]])
      for (row in table) {
        if (!arg %in% row$not) {
          next
        }
        if (!deprecated) {
          problems <- c(problems, sprintf(
            "%s(): `%s` is `%s` (%s)", fn, arg, row$name, row$concept
          ))
        } else if (!row$name %in% names(args)) {
          problems <- c(problems, sprintf(
            "%s(): deprecated `%s` without `%s`", fn, arg, row$name
          ))
        }
      }
      if (deprecated) {
        found <- c(found, paste(fn, arg))
      }
    }
  }
  listed <- paste(renames$fn, renames$old)
  c(problems,
    sprintf("%s: deprecated but not in the renames table",
            setdiff(found, listed)),
    sprintf("%s: in the renames table but not deprecated",
            setdiff(listed, found)))
}

# The note's defaults of `timeout`: c(function = seconds), from its
# bullets "- 300 seconds for ... (`layout_cost()`, ...)".
timeout_defaults <- function(lines = vocabulary_note()) {
  start <- grep("^## Defaults of `timeout`", lines)
  end <- grep("^## ", lines)
  end <- min(end[end > start])
  text <- paste(lines[start:(end - 1)], collapse = " ")
  bullets <- strsplit(text, " - ", fixed = TRUE)[[1]][-1]
  out <- numeric()
  for (b in bullets) {
    fns <- ticked(b)
    fns <- fns[fns != "timeout"]
    seconds <- as.numeric(sub("^([0-9]+) seconds.*", "\\1", b))
    out[fns] <- seconds
  }
  out
}

# Where the defaults of `timeout` among `functions` are not the note's:
# a function the note does not name, or another figure.
timeout_problems <- function(functions, defaults) {
  problems <- character()
  for (fn in names(functions)) {
    default <- formals(functions[[fn]])$timeout
    if (is.null(default)) {
      next
    }
    if (!fn %in% names(defaults)) {
      problems <- c(problems, sprintf("%s(): not in the note", fn))
    } else if (!identical(as.numeric(eval(default)), defaults[[fn]])) {
      problems <- c(problems, sprintf("%s(): timeout = %s, the note says %s",
                                      fn, deparse(default), defaults[[fn]]))
    }
  }
  problems
}

test_that("every default of timeout is the note's, for the reason it gives", {
  defaults <- timeout_defaults()
  expect_identical(defaults[c("layout_cost", "search_layout",
                              "save_checkpoint")], c(layout_cost = 300,
                                                     search_layout = 600,
                                                     save_checkpoint = 3600))
  expect_identical(timeout_problems(user_functions(), defaults), character())
  functions <- list(fast = function(timeout = 300) NULL,
                    slow = function(timeout = 60) NULL,
                    other = function(timeout = 10) NULL)
  expect_identical(
    timeout_problems(functions, c(fast = 300, slow = 600)),
    c("slow(): timeout = 60, the note says 600", "other(): not in the note")
  )
})

test_that("the note's tables are read", {
  table <- argument_table()
  expect_gt(length(table), 10)
  memory <- Filter(function(r) identical(r$name, "memory"), table)[[1]]
  expect_identical(memory$not, c("device_memory", "limit"))
  renames <- rename_table()
  expect_true("layout_plan" %in% renames$fn)
  expect_true(all(nzchar(c(renames$old, renames$new))))
})

test_that("every user-facing function names each concept one way", {
  functions <- user_functions()
  expect_true(all(c("layout_plan", "compare_layouts",
                    "plot.kerasmesh_layout_plan",
                    "sharding_picture.kerasmesh_device_mesh",
                    "as.data.frame.kerasmesh_launch") %in% names(functions)))
  expect_identical(
    vocabulary_problems(functions, argument_table(), rename_table()),
    character()
  )
})

test_that("a concept with two names is reported", {
  table <- list(
    list(concept = "a device's memory", name = "memory",
         not = c("device_memory", "limit")),
    list(concept = "a row limit", name = "n", not = "max_rows")
  )
  functions <- list(
    plot_it = function(x, limit = NULL) NULL,
    format_it = function(x, n = 5, max_rows = deprecated()) NULL,
    cost_it = function(x, device_memory = deprecated()) NULL,
    fine = function(x, memory = NULL, device_memory = deprecated()) NULL
  )
  renames <- data.frame(fn = c("format_it", "fine", "gone"),
                        old = c("max_rows", "device_memory", "lines"),
                        new = c("n", "memory", "n"))
  expect_identical(vocabulary_problems(functions, table, renames), c(
    "plot_it(): `limit` is `memory` (a device's memory)",
    "cost_it(): deprecated `device_memory` without `memory`",
    "cost_it device_memory: deprecated but not in the renames table",
    "gone lines: in the renames table but not deprecated"
  ))
})

# The renames (rename_table()) that `functions` do not refuse when given
# under both names: each function is called with `first` as its first
# argument, 1 for its other arguments without a default, and the old and
# the new name, and must stop with a kerasmesh_error_deprecated before it
# looks at anything else.
unrefused_renames <- function(functions, renames, first) {
  problems <- character()
  for (i in seq_len(nrow(renames))) {
    r <- renames[i, ]
    f <- formals(functions[[r$fn]])
    required <- names(f)[vapply(f, identical, TRUE, rlang::missing_arg())]
    others <- setdiff(required[-1], c("...", r$new, r$old))
    args <- c(list(first), stats::setNames(as.list(rep(1, length(others))),
                                           others),
              stats::setNames(list(1, 1), c(r$new, r$old)))
    err <- tryCatch(suppressWarnings(do.call(functions[[r$fn]], args)),
                    error = identity)
    if (!inherits(err, "kerasmesh_error_deprecated")) {
      problems <- c(problems,
                    sprintf("%s(): `%s` with `%s`", r$fn, r$old, r$new))
    }
  }
  problems
}

test_that("every renamed argument given under both names is a classed error", {
  renames <- rename_table()
  expect_gt(nrow(renames), 8)
  build <- function() stop("not built")
  expect_identical(unrefused_renames(user_functions(), renames, build),
                   character())
})

test_that("a rename that takes both names is reported", {
  functions <- list(
    refuses = function(x, n = 5, lines = deprecated()) {
      renamed_arg("n", "lines")
    },
    takes_old = function(x, n = 5, lines = deprecated()) {
      if (!missing(lines)) lines else n
    },
    fails_first = function(x, memory = NULL, limit = deprecated()) {
      stop("x is checked before the names")
    }
  )
  renames <- data.frame(fn = names(functions),
                        old = c("lines", "lines", "limit"),
                        new = c("n", "n", "memory"))
  expect_identical(unrefused_renames(functions, renames, NULL), c(
    "takes_old(): `lines` with `n`", "fails_first(): `limit` with `memory`"
  ))
})

test_that("a deprecated argument keeps working, and both names are refused", {
  plan <- fixture_plan()
  cost <- fixture_cost()
  expect_warning(with_png(plot(plan, limit = "16GB")),
                 class = "kerasmesh_warning_deprecated")
  expect_warning(with_png(plot(plan, max_groups = 3)),
                 class = "kerasmesh_warning_deprecated")
  expect_warning(with_png(plot(plan, by = "kind")),
                 class = "kerasmesh_warning_deprecated")
  expect_warning(out <- format(cost, device_memory = "16kB"),
                 class = "kerasmesh_warning_deprecated")
  expect_identical(out, format(cost, memory = "16kB"))
  expect_warning(format(summary(cost, by = "variable"), max_rows = 1),
                 class = "kerasmesh_warning_deprecated")
  expect_error(plot(plan, memory = "16GB", limit = "8GB"),
               class = "kerasmesh_error_deprecated")
  expect_error(format(cost, memory = 1, device_memory = 2),
               class = "kerasmesh_error_deprecated")
  build <- function() stop("not built")
  dist <- fixture_distribution()
  expect_error(compare_layouts(build, list(a = dist), 16, memory = 1,
                               device_memory = 2),
               class = "kerasmesh_error_deprecated")
  expect_error(layout_plan(build, fixture_layout_map(),
                           layout = fixture_layout_map()),
               class = "kerasmesh_error_deprecated")
  expect_snapshot(error = TRUE, {
    lines <- format(cost, device_memory = "20kB")
    check_layout(build, fixture_layout_map(), layout = fixture_layout_map())
  })
})

test_that("an old argument name reaches the function under its new name", {
  # ... and its errors name it as the user typed it.
  build <- function() stop("not built")
  lm <- fixture_layout_map()
  sent <- suppressWarnings(shim_request("layout_plan", build, layout = lm))
  expect_identical(sent$name, "plan.plan_layout")
  expect_identical(sent$args$distribution, lm$py)
  expect_warning(
    expect_error(compare_layouts(build, layouts = list(dp = "x"),
                                 batch_size = 16),
                 "layouts$dp", fixed = TRUE,
                 class = "kerasmesh_error_distribution"),
    class = "kerasmesh_warning_deprecated"
  )
})
