# launch_local()'s result: one element per worker.

launch_fields <- c("process_id", "pid", "status", "exit_status", "value",
                   "error", "output")
# What `res$name` reads: each worker's field, or the launch's own.
launch_names <- c(launch_fields, "coordinator_address", "timeout", "elapsed")

new_launch <- function(workers, address, timeout, elapsed, verbose = TRUE) {
  rows <- lapply(workers, function(w) {
    list(
      process_id = as.integer(w$id),
      pid = as.integer(w$pid),
      status = w$status,
      exit_status = as.integer(w$exit_status),
      value = w$value,
      error = w$error,
      output = if (verbose) w$output_lines else quiet_lines(w$output_lines)
    )
  })
  stamp_fields(structure(rows, coordinator_address = address,
                         timeout = timeout, elapsed = elapsed,
                         class = "kerasmesh_launch"))
}

# absl's info and warning lines ("I1130 ..." and "W1130 ..."), such as the
# coordination service's: all is well. Errors ("E...", "F...") are kept.
absl_chatter <- "^[IW][0-9]{4} [0-9:.]+ +[0-9]+ [^ ]+:[0-9]+\\]"

# Where an absl line starts. C++ and R write a worker's standard output and
# error to one file, unsynchronised, so such a line can start in the middle
# of another.
absl_line_start <- "(?<=.)(?=[IWEF][0-9]{4} [0-9:.]+ +[0-9]+ [^ ]+:[0-9]+\\])"

# gloo's connection message, "[Gloo] Rank 3 is connected to 7 peer ranks.
# Expected number of connected peer ranks is : 7", is written to stdout in
# these pieces, each number separately, by every thread that connects. The
# pieces of several threads interleave, so they are removed wherever they
# land, with the numbers and line ends that belong to them.
gloo_pieces <- c("[Gloo] Rank ", " is connected to ", " peer ranks. ",
                 "Expected number of connected peer ranks is : ")

quiet_lines <- function(lines) {
  if (length(lines) == 0) {
    return(character())
  }
  text <- paste(lines, collapse = "\n")
  for (piece in gloo_pieces) {
    text <- gsub(piece, "\001", text, fixed = TRUE)
  }
  # A piece, then its number, and a line end that only more pieces or
  # numbers follow: one stretch of gloo's output, marked \002.
  text <- gsub("\001(?:[0-9]|\001|\n(?=[0-9]*[\001\n]))*", "\002", text,
               perl = TRUE)
  text <- gsub(absl_line_start, "\n", text, perl = TRUE)
  lines <- strsplit(paste0(text, "\n"), "\n", fixed = TRUE)[[1]]
  chatter <- grepl("^\002+$", lines) | grepl(absl_chatter, lines)
  # Two threads' absl lines, one inside the other, leave the outer line's
  # end on a line of its own: a blank line right after dropped chatter.
  stray_end <- lines == "" & c(FALSE, utils::head(chatter, -1))
  gsub("\002", "", lines[!chatter & !stray_end], fixed = TRUE)
}

#' @export
`$.kerasmesh_launch` <- function(x, name) {
  checked_launch_field(x, name)
}

#' @export
`[[.kerasmesh_launch` <- function(x, i, ...) {
  check_dots_none()
  if (is.character(i) && length(i) == 1 && !is.na(i)) {
    return(checked_launch_field(x, i))
  }
  i <- check_worker_index(x, i, "a single worker number", single = TRUE)
  .subset2(launch_workers(x), i)
}

# The workers: the elements (a field the user adds, `res$note <- "..."`,
# is an attribute, "kerasmesh_own").
launch_workers <- function(x) {
  unname(unclass(x)[seq_along(unclass(x))])
}

# What launch_local() reported can't be set; a field of one's own can
# (`res$note <- "first try"`), kept apart from the workers.
#' @export
`$<-.kerasmesh_launch` <- function(x, name, value) { # nolint
  set_own_field(x, name, value, "x${name}")
}

#' @export
`[[<-.kerasmesh_launch` <- function(x, i, ..., value) {
  check_dots_none()
  set_own_field(x, i, value, "x[[{deparse(name)}]]")
}

#' @export
`[<-.kerasmesh_launch` <- function(x, i, ..., value) {
  kerasmesh_abort(
    c("A launch's workers can't be set.",
      i = "They are what {.fn launch_local} reported; keep a value of your
           own under a name ({.code x$note <- value})."),
    kind = kinds$argument
  )
}

#' @export
`names<-.kerasmesh_launch` <- function(x, value) {
  kerasmesh_abort(
    c("A launch's names can't be set.",
      i = "Its workers have none; add a field of your own with
           {.code x$note <- value}."),
    kind = kinds$argument
  )
}

set_own_field <- function(x, name, value, code, call = rlang::caller_env()) {
  if (!is.character(name) || length(name) != 1 || is.na(name) ||
      !nzchar(name) || name %in% launch_names) {
    code <- cli::format_inline(code)
    kerasmesh_abort(
      c("{.code {code}} can't be set: it is what {.fn launch_local}
         reported.",
        i = "Keep a value of your own under a name of its own
             ({.code x$note <- value})."),
      kind = kinds$argument, call = call
    )
  }
  # Kept apart from the workers, so that lapply() and for() see workers
  # only; no edit of what launch_local() reported (object_fields()).
  own <- attr(x, "kerasmesh_own", exact = TRUE) %||% list()
  own[[name]] <- value
  attr(x, "kerasmesh_own") <- if (length(own)) own
  x
}

#' @export
length.kerasmesh_launch <- function(x) {
  length(launch_workers(x))
}

#' @export
`[.kerasmesh_launch` <- function(x, i, ...) {
  check_dots_none()
  if (missing(i)) {
    return(x)
  }
  picked <- check_worker_index(x, i, "worker numbers")
  check_unedited(x)
  attrs <- attributes(x)
  out <- launch_workers(x)[picked]
  attributes(out) <- attrs[setdiff(names(attrs), "names")]
  stamp_fields(out)
}

check_worker_index <- function(x, i, what, single = FALSE,
                               call = rlang::caller_env()) {
  n <- length(x)
  what <- paste(what, "from 1 to {n}")
  if (!single) what <- paste(what, "or {n} logical{?s}, one per worker")
  check_index(i, n, what, single = single,
              subject = "The index of a launch",
              way_out = "The launch has {n} worker{?s}.", call = call)
}

# A field of every worker (a vector for process_id, pid, status and
# exit_status; a list for value, error and output) or an attribute of the
# launch.
launch_field <- function(x, name) {
  rows <- launch_workers(x)
  switch(name,
    process_id = , pid = , exit_status =
      vapply(rows, function(r) r[[name]], integer(1)),
    status = vapply(rows, function(r) r[[name]], character(1)),
    value = , error = , output = lapply(rows, function(r) r[[name]]),
    coordinator_address = , timeout = , elapsed = attr(x, name),
    NULL
  )
}

# The field the user asks for (`res$status`), of a launch as it was made.
# A name that is no field is an error: `all(res$staus == "ok")` would be
# TRUE of the NULL it would give.
checked_launch_field <- function(x, name, call = rlang::caller_env()) {
  fields <- launch_names
  own <- attr(x, "kerasmesh_own", exact = TRUE)
  if (name %in% names(own)) {
    return(own[[name]])
  }
  if (!name %in% fields) {
    kerasmesh_abort(
      c("A launch has no field {.val {name}}.",
        i = "Its fields: {.val {fields}}."),
      kind = kinds$argument, call = call
    )
  }
  check_unedited(x, call = call)
  with_edits_named(x, launch_field(x, name), call = call)
}

#' @export
as.data.frame.kerasmesh_launch <- function(x, row.names = NULL, # nolint
                                           optional = FALSE, ...,
                                           stringsAsFactors = FALSE) { # nolint
  check_dots_none()
  check_unedited(x)
  with_edits_named(x, {
    out <- data.frame(lapply(
      c(process_id = "process_id", pid = "pid", status = "status",
        exit_status = "exit_status"),
      function(name) launch_field(x, name)
    ), stringsAsFactors = FALSE)
    for (name in c("value", "error", "output")) {
      out[[name]] <- launch_field(x, name)
    }
    plain_frame(out, row.names, stringsAsFactors = stringsAsFactors)
  })
}

#' @export
# `n`: the lines of output shown per failed process.
format.kerasmesh_launch <- function(x, ..., n = 5, lines = deprecated()) {
  check_dots_none()
  n_arg <- typed_name("n", "lines")
  n <- renamed_arg("n", "lines")
  n <- check_whole(n, min = 0, arg = n_arg)
  check_unedited(x)
  with_edits_named(x, format_launch(x, n))
}

format_launch <- function(x, n) {
  processes <- length(x)
  status <- launch_field(x, "status")
  counts <- table(factor(status, unique(status)))
  header <- c(
    sprintf("<kerasmesh_launch> %s at %s (%.1f s)",
            cli::pluralize("{processes} process{?es}"),
            attr(x, "coordinator_address"), attr(x, "elapsed")),
    paste("Status:", if (processes == 0) "no process" else
      paste(counts, status_words(names(counts), counts), collapse = ", "))
  )
  out <- header
  for (i in seq_len(processes)) {
    w <- x[[i]]
    exit <- if (is.na(w$exit_status)) "?" else w$exit_status
    out <- c(out, sprintf(
      "process %d (pid %d): %s, exit status %s", w$process_id, w$pid,
      w$status, exit
    ))
    if (identical(w$status, "ok")) {
      out <- c(out, paste0("  value: ", summarise_value(w$value)))
      next
    }
    if (!is.null(w$error)) {
      out <- c(out, paste0("  error: ", first_line(w$error)))
    }
    tail_lines <- utils::tail(w$output, n)
    if (length(tail_lines)) {
      out <- c(out, "  last output:",
               paste0("  | ", truncate_right(tail_lines)))
    }
  }
  out
}

# "1 ok, 2 errors, 1 stopped": the statuses that are nouns take a plural.
status_words <- function(status, counts) {
  plural <- status %in% c("error", "timeout") & counts != 1
  paste0(status, ifelse(plural, "s", ""))
}

#' @export
print.kerasmesh_launch <- function(x, ...) {
  writeLines(format(x, ...))
  invisible(x)
}

# Short descriptions for print().

summarise_value <- function(x) {
  if (is.list(x) && !is.data.frame(x)) {
    fields <- if (is.null(names(x))) "" else
      paste0(": ", paste(names(x), collapse = ", "))
    return(truncate_right(sprintf("a list of %d%s", length(x), fields)))
  }
  text <- tryCatch(
    paste(utils::capture.output(utils::str(x, give.attr = FALSE,
                                           vec.len = 2)),
          collapse = " "),
    error = function(e) class(x)[1]
  )
  truncate_right(gsub("\\s+", " ", trimws(text)))
}

first_line <- function(e) {
  message <- tryCatch(conditionMessage(e), error = function(err) "")
  lines <- strsplit(cli::ansi_strip(message), "\n", fixed = TRUE)[[1]]
  truncate_right(if (length(lines)) lines[1] else "")
}
