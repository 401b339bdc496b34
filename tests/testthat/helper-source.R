# The package's own source files, for the tests that read them
# (test-source.R, test-python.R, test-vocabulary.R, test-docs.R).

# R/ of the package being tested: the source tree under test_local(), the
# copy R CMD check keeps in kerasmesh.Rcheck/00_pkg_src/ under R CMD check.
source_dir <- function() {
  candidates <- c(
    test_path("..", "..", "R"),
    test_path("..", "..", "00_pkg_src", "kerasmesh", "R")
  )
  found <- candidates[dir.exists(candidates)]
  if (length(found) == 0) {
    skip("the package's R sources are not next to its tests")
  }
  found[[1]]
}

# The files below `dir` whose names match `pattern`, every folder below
# included (Python's caches left out), named by their path below `dir`.
files_under <- function(dir, pattern) {
  files <- sort(list.files(dir, pattern = pattern, recursive = TRUE))
  files <- files[!grepl("(^|/)__pycache__/", files)]
  stats::setNames(file.path(dir, files), files)
}

source_files <- function() files_under(source_dir(), "[.][Rr]$")

# The shim's Python tree, next to R/ in the same source.
shim_files <- function() {
  shim <- file.path(dirname(source_dir()), "inst", "python", "kerasmesh")
  files_under(shim, "[.]py$")
}

# Every call from R into the shim in the parsed `exprs`: shim_call(),
# shim_object() and the bridge's own `$call()` on the shim handle, each as
# list(fn = the shim function named (a string, or NULL when not a literal),
# args = the names of its arguments, "" for an unnamed one). `call =` is
# shim_call()'s own argument and is left out, and so are the bridge's
# forwarding calls (`$call(name, ...)`).
shim_calls <- function(exprs) {
  out <- list()
  is_shim_call <- function(f) {
    (is.name(f) && as.character(f) %in% c("shim_call", "shim_object")) ||
      (is.call(f) && identical(f[[1]], as.name("$")) &&
         as.character(f[[3]]) %in% c("call", "call_object"))
  }
  walk <- function(e) {
    if (!is.call(e)) {
      return()
    }
    args <- as.list(e)[-1]
    forwards <- any(vapply(args, identical, TRUE, quote(...)))
    if (is_shim_call(e[[1]]) && length(args) > 0 && !forwards) {
      named <- names(args) %||% rep("", length(args))
      fn <- if (is.character(args[[1]])) args[[1]]
      keep <- named[-1] != "call"
      out[[length(out) + 1]] <<- list(fn = fn, args = named[-1][keep])
    }
    for (part in as.list(e)) {
      if (!missing(part)) walk(part)
    }
  }
  for (e in exprs) walk(e)
  out
}

# What is wrong with `calls` (shim_calls()), given `parameters(fn)`: the
# parameter names of the shim's api function `fn` ("**" for a function
# that takes any keyword), or NULL when api/ has no such function.
shim_call_problems <- function(calls, parameters) {
  problems <- character()
  for (c in calls) {
    if (is.null(c$fn)) {
      problems <- c(problems, "a shim call names its function by a variable")
      next
    }
    params <- parameters(c$fn)
    if (is.null(params)) {
      problems <- c(problems, sprintf("%s: no such api function", c$fn))
      next
    }
    if (any(c$args == "")) {
      problems <- c(problems, sprintf("%s: an unnamed argument", c$fn))
    }
    unknown <- setdiff(c$args[nzchar(c$args)], params)
    if (length(unknown) && !"**" %in% params) {
      problems <- c(problems, sprintf("%s: no parameter %s", c$fn,
                                      paste(unknown, collapse = ", ")))
    }
  }
  problems
}
