#' What a checkpoint directory holds
#'
#' Lists the steps of a checkpoint directory written by [save_checkpoint()]
#' or [callback_checkpoint()], whether each is complete (and why not), and
#' describes one step's variables: shape, data type and the layout they
#' were saved with (the mesh, and the mesh axis each dimension was split
#' over). It reads metadata, and every file of each step once to compare
#' its checksum with the one recorded when the step was saved, so one
#' damaged step shows as such, beside the others.
#'
#' Folders named by a step number, as Orbax writes it (`"10"`, never
#' `"010"`), that kerasmesh did not save are listed for what they are
#' (`writer`): steps another tool wrote with Orbax (such as Keras's
#' `OrbaxCheckpoint`), which can be restored, and folders that are no
#' checkpoint step. A number with leading zeros names no step, as Orbax
#' reads a directory; such a folder is not listed. kerasmesh never deletes
#' or replaces any of them.
#'
#' @inheritParams save_checkpoint
#' @param step The step to describe: `NULL` for the newest complete one.
#' @param ... Must be empty.
#' @return A `kerasmesh_checkpoint_info` object, a list:
#'   * `directory`: the absolute path.
#'   * `steps`: a data frame with columns `step`, `complete`, `problem`
#'     (why a step is incomplete or damaged, naming the file; `NA` if
#'     complete), `time` (when it was committed, `NA` if it was not) and
#'     `writer`: `"kerasmesh"`, `"orbax"` (another tool that writes Orbax
#'     checkpoints, such as Keras's `OrbaxCheckpoint`) or `"unknown"` (a
#'     folder that is no checkpoint step, or an unfinished write).
#'   * `last_complete`: whether the newest step is complete.
#'   * `step`, `epoch`, `process_count`: the step described (`NULL` when no
#'     step is complete), the epochs trained and the number of processes
#'     that wrote it.
#'   * `variables`: a data frame with columns `key` (`"group/path"`),
#'     `group` (`"trainable_variables"`, `"non_trainable_variables"` or
#'     `"optimizer_variables"`), `path`, `shape` (list of integer vectors),
#'     `dtype`, `axes` (list: the mesh axis each dimension was split over,
#'     `NA` when not split) and `mesh` (such as `"data=2, model=4"`).
#' @export
#' @examplesIf keras_available()
#' library(reticulate, include.only = "import")
#' keras <- import("keras")
#' model <- keras$Sequential(list(
#'   keras$Input(shape = list(4L)), keras$layers$Dense(2L, name = "dense")
#' ), name = "small")
#' dir <- tempfile()
#' save_checkpoint(model, dir)
#' info <- checkpoint_info(dir)
#' info
#' info$variables[, c("path", "dtype")]
#' unlink(dir, recursive = TRUE)
checkpoint_info <- function(dir, step = NULL, ...) {
  check_call()
  check_string(dir)
  step <- check_whole(step, min = 0, allow_null = TRUE)
  new_checkpoint_info(shim_call("checkpoint.info",
                                directory = path.expand(dir), step = step))
}

#' @export
format.kerasmesh_checkpoint_info <- function(x, ...) {
  check_dots_none()
  check_unedited(x)
  with_edits_named(x, {
    steps <- x$steps
    n <- nrow(steps) # nolint: object_usage_linter. Read by cli.
    out <- c(
      paste("<kerasmesh_checkpoint_info>", x$directory),
      cli::pluralize("{n} step{?s}: {paste(ifelse(steps$complete,
                      steps$step, paste0(steps$step, ' (incomplete)')),
                      collapse = ', ')}")
    )
    for (i in which(!steps$complete | steps$writer != "kerasmesh")) {
      out <- c(out, strwrap(sprintf("step %s: %s", steps$step[i],
                                    step_note(steps, i)),
                            width = 80, indent = 2, exdent = 4))
    }
    if (is.null(x$step)) {
      return(c(out, "No complete step."))
    }
    vars <- x$variables
    out <- c(out, sprintf(
      "Step %s%s: %s%s", x$step,
      if (is.null(x$epoch)) "" else sprintf(" (epoch %s)", x$epoch),
      count_text(nrow(vars), "variable"),
      if (is.null(x$process_count)) "" else
        cli::pluralize(", written by {x$process_count} process{?es}")
    ))
    meshes <- unique(vars$mesh[!is.na(vars$mesh)])
    if (length(meshes)) {
      out <- c(out, paste("Mesh:", paste(meshes, collapse = "; ")))
    }
    if (nrow(vars)) {
      table <- data.frame(
        variable = truncate_left(vars$key, 44),
        shape = vapply(vars$shape, format_dims, ""),
        axes = vapply(vars$axes, format_axes_short, ""),
        dtype = vars$dtype,
        stringsAsFactors = FALSE
      )
      out <- c(out, format_table(table))
    }
    out
  })
}

#' @export
print.kerasmesh_checkpoint_info <- function(x, ...) {
  writeLines(format(x, ...))
  invisible(x)
}

# Private helpers ------------------------------------------------------------

new_checkpoint_info <- function(desc) {
  steps <- desc$steps
  # Without names: a single problem comes as a string, which vapply()
  # would name by itself.
  times <- vapply(steps$time, function(t) t %||% NA_real_, numeric(1),
                  USE.NAMES = FALSE)
  problems <- vapply(steps$problem, function(p) p %||% NA_character_, "",
                     USE.NAMES = FALSE)
  out <- list(
    directory = desc$directory,
    steps = data.frame(
      step = whole_numbers(steps$step),
      complete = as.logical(unlist(steps$complete)),
      problem = problems,
      time = as.POSIXct(times, origin = "1970-01-01"),
      writer = as.character(unlist(steps$writer)),
      stringsAsFactors = FALSE
    ),
    last_complete = isTRUE(desc$last_complete),
    step = desc[["step"]],
    epoch = desc$epoch,
    process_count = desc$process_count,
    variables = checkpoint_variables(desc$variables)
  )
  stamp_fields(structure(out, class = "kerasmesh_checkpoint_info"))
}

checkpoint_variables <- function(columns) {
  if (is.null(columns)) {
    return(NULL)
  }
  df <- data.frame(
    key = as.character(unlist(columns$key)),
    group = as.character(unlist(columns$group)),
    path = as.character(unlist(columns$path)),
    stringsAsFactors = FALSE
  )
  df$shape <- lapply(columns$shape, whole_numbers)
  df$dtype <- as.character(unlist(columns$dtype))
  df$axes <- Map(function(axes, shape) {
    if (is.null(axes)) rep(NA_character_, length(shape)) else
      axes_from_python(axes)
  }, columns$axes, df$shape)
  df$mesh <- Map(function(shape, names) {
    if (is.null(shape)) NA_character_ else
      paste0(unlist(names), "=", unlist(shape), collapse = ", ")
  }, columns$mesh_shape, columns$mesh_axes)
  df$mesh <- as.character(unlist(df$mesh))
  df
}


# What a step's line says beside its number: its problem, and who wrote it
# when that was not kerasmesh.
step_note <- function(steps, i) {
  writer <- switch(steps$writer[i],
    kerasmesh = NULL,
    orbax = "written by another Orbax tool, not kerasmesh",
    "not saved by kerasmesh"
  )
  paste(c(if (!steps$complete[i]) steps$problem[i], writer),
        collapse = "; ")
}
