# Condition kinds as the sources raise them, found without running them, so
# that the page ?kerasmesh_conditions can be checked against the code even
# without Python. Returns list(errors = <kinds>, warnings = <kinds>).
raised_condition_kinds <- function() {
  r <- r_condition_kinds()
  py <- python_condition_kinds()
  list(errors = sort(unique(c(r$errors, py$errors))),
       warnings = sort(unique(c(r$warnings, py$warnings))))
}

# Kinds in the installed namespace's function bodies: `kind = "<kind>"`
# arguments (a warning inside kerasmesh_warn(), an error elsewhere) and
# literal "kerasmesh_error_<kind>" / "kerasmesh_warning_<kind>" strings.
r_condition_kinds <- function() {
  ns <- asNamespace("kerasmesh")
  found <- list(errors = character(), warnings = character())
  add <- function(type, kind) found[[type]] <<- c(found[[type]], kind)
  walk <- function(x, in_warn = FALSE) {
    if (is.character(x) && length(x) == 1 && !is.na(x)) {
      pattern <- "^kerasmesh_(error|warning)_([a-z_]+)$"
      m <- regmatches(x, regexec(pattern, x))[[1]]
      if (length(m)) add(if (m[2] == "error") "errors" else "warnings", m[3])
    } else if (is.call(x)) {
      fn <- x[[1]]
      warn <- in_warn || identical(fn, quote(kerasmesh_warn))
      args <- as.list(x)[-1]
      kind <- args[["kind"]]
      if (!is.null(names(args)) && is.character(kind) && length(kind) == 1) {
        add(if (identical(fn, quote(kerasmesh_warn))) "warnings" else "errors",
            kind)
      }
      for (a in as.list(x)) if (!missing(a)) walk(a, warn)
    } else if (is.function(x)) {
      walk(body(x))
    }
  }
  for (name in ls(ns, all.names = TRUE)) {
    obj <- get(name, envir = ns)
    if (is.function(obj)) walk(body(obj))
  }
  lapply(found, unique)
}

# Kinds in the shim's sources: KerasmeshError("<kind>", ...) and
# mismatch("<kind>", ...) are errors, warn("<kind>", ...) warnings, and a
# plan problem("<kind>", ERROR | WARNING, ...) either.
python_condition_kinds <- function() {
  dir <- system.file("python", "kerasmesh", package = "kerasmesh")
  text <- paste(unlist(lapply(list.files(dir, "\\.py$", full.names = TRUE,
                                         recursive = TRUE),
                              readLines, warn = FALSE)), collapse = "\n")
  grab <- function(pattern, group = 2) {
    m <- gregexpr(pattern, text, perl = TRUE)
    hits <- regmatches(text, m)[[1]]
    sub(pattern, paste0("\\", group), hits, perl = TRUE)
  }
  problems <- paste0('_?problem\\(\\s*"([a-z_]+)",',
                     '\\s*("?)(ERROR|WARNING|error|warning)\\2')
  severity <- tolower(grab(problems, 3))
  kinds <- grab(problems, 1)
  list(
    errors = unique(c(grab('\\b(KerasmeshError|mismatch)\\(\\s*"([a-z_]+)"'),
                      kinds[severity == "error"])),
    warnings = unique(c(grab('\\b(warn)\\(\\s*"([a-z_]+)"'),
                        kinds[severity == "warning"]))
  )
}

# The text of the help page ?kerasmesh_conditions: the installed one, or,
# under pkgload::load_all() (testthat::test_local()), where the package has
# no help index, the source's man/kerasmesh_conditions.Rd.
conditions_page_text <- function() {
  topic <- utils::help("kerasmesh_conditions", package = "kerasmesh")
  rd <- if (length(topic) == 1) {
    utils:::.getHelpFile(topic)
  } else {
    tools::parse_Rd(system.file("man", "kerasmesh_conditions.Rd",
                                package = "kerasmesh", mustWork = TRUE))
  }
  options <- list(underline_titles = FALSE)
  paste(utils::capture.output(tools::Rd2txt(rd, options = options)),
        collapse = "\n")
}
