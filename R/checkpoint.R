#' Save and restore sharded checkpoints
#'
#' `save_checkpoint()` writes a model's variables and its optimizer's state
#' (slots and step count) as one step of a checkpoint directory, with
#' Orbax, the checkpoint library Keras's `OrbaxCheckpoint` uses. Every
#' process of a distributed run writes the shards it holds, in parallel,
#' and every process must call it. `restore_checkpoint()` reads a step back
#' into a model, placing each variable as the model's layout says: onto
#' the same mesh, a mesh of another shape, or another number of processes.
#'
#' Writes are atomic. Orbax writes a step into a temporary directory and
#' renames it once every process has written its part; kerasmesh then
#' lists the step's files and their sizes. A step is *complete* when it was
#' renamed and every listed file is there with its size; a step cut short
#' (a process killed while saving, a file deleted or truncated) is
#' incomplete, and `restore_checkpoint()` takes the newest complete step.
#' See [checkpoint_info()].
#'
#' A restore checks first that the checkpoint's variables match the
#' model's (names and shapes) and fit the model's layout, and reads every
#' array before it assigns any: when it fails, the model is unchanged.
#' Metrics are not saved. Build the model (under its distribution, with
#' the same layer names) and compile it before restoring; the optimizer's
#' slots are created if training has not created them yet.
#'
#' @param model A Keras model, built (its variables exist).
#' @param dir The checkpoint directory, one subdirectory per step.
#' @param step The step to write: `NULL` for the optimizer's step count
#'   (the number of batches trained). For `restore_checkpoint()`, the step
#'   to read: `NULL` for the newest complete one.
#' @param keep Keep only the newest `keep` steps, deleting older ones;
#'   `NULL` keeps all.
#' @param overwrite Whether to replace a complete step of the same number.
#' @return `save_checkpoint()`: invisibly, a list with `step`, `epoch`,
#'   `path` and `variables` (the number saved). `restore_checkpoint()`:
#'   invisibly, the same for the step it read.
#' @section Errors:
#' * `kerasmesh_error_checkpoint_directory`: `dir` holds no checkpoint.
#' * `kerasmesh_error_checkpoint_incomplete`, `..._checkpoint_step`: no
#'   complete step, or the `step` asked for is missing or incomplete.
#' * `kerasmesh_error_checkpoint_variables`,
#'   `kerasmesh_error_checkpoint_shape`: the checkpoint's variables are not
#'   the model's (the message names the first that differs).
#' * `kerasmesh_error_checkpoint_layout`: a saved shape can't be split as
#'   the model's layout says (the message names the variable).
#' * `kerasmesh_error_checkpoint_exists`: the step is saved already.
#' @seealso [checkpoint_callback()] to save while `fit()` runs,
#'   [checkpoint_info()]; the "Checkpoints" section of
#'   `vignette("multi-process", package = "kerasmesh")`.
#' @export
#' @examplesIf keras_available()
#' simulate_devices(8)
#' library(reticulate, include.only = "import")
#' keras <- import("keras")
#' build <- function() {
#'   model <- keras$Sequential(list(
#'     keras$Input(shape = list(8L)),
#'     keras$layers$Dense(16L, name = "dense"),
#'     keras$layers$Dense(4L, name = "dense_1")
#'   ), name = "mlp")
#'   model$compile(optimizer = "adam", loss = "mse")
#'   model
#' }
#' rules <- function(mesh) {
#'   layout_map(mesh, ".*dense.*kernel" = c(NA, "model"))
#' }
#' dir <- tempfile()
#'
#' # Train on a 2 x 4 mesh and save.
#' mesh <- device_mesh(c(data = 2, model = 4))
#' model <- with_distribution(model_parallel(rules(mesh)), {
#'   model <- build()
#'   x <- numpy_array(matrix(runif(64), 8))
#'   model$fit(x, numpy_array(matrix(0, 8, 4)), epochs = 2L, verbose = 0L)
#'   model
#' })
#' save_checkpoint(model, dir)
#'
#' # Restore onto an 8 x 1 mesh.
#' mesh81 <- device_mesh(c(data = 8, model = 1))
#' restored <- with_distribution(model_parallel(rules(mesh81)), build())
#' restore_checkpoint(restored, dir)
#' variable_sharding(restored)
#' unlink(dir, recursive = TRUE)
save_checkpoint <- function(model, dir, step = NULL, keep = NULL,
                            overwrite = FALSE) {
  check_model(model)
  check_string(dir)
  step <- check_step(step)
  if (!is.null(keep)) {
    keep <- check_count(keep)
  }
  check_flag(overwrite)
  invisible(shim_call("checkpoint.save", model, path.expand(dir), step, keep,
                      overwrite))
}

#' @rdname save_checkpoint
#' @export
restore_checkpoint <- function(model, dir, step = NULL) {
  check_model(model)
  check_string(dir)
  step <- check_step(step)
  invisible(shim_call("checkpoint.restore", model, path.expand(dir), step))
}

#' Save checkpoints while `fit()` trains
#'
#' A Keras callback that calls [save_checkpoint()] every `every` epochs or
#' steps (batches) of `fit()`, keeping the newest `keep` steps. Steps are
#' the optimizer's step count, which [restore_checkpoint()] restores: a run
#' resumed from a checkpoint saves at the same steps as the run it resumes.
#' In a run of several processes, give every process the callback; each
#' writes its own shards.
#'
#' @inheritParams save_checkpoint
#' @param every Save every `every` epochs or steps.
#' @param unit `"epoch"` or `"step"`.
#' @return A Keras callback (a Python object) for `fit()`'s `callbacks`.
#'   Its field `saved` lists the steps it saved.
#' @seealso [checkpoint_info()] to see what was saved.
#' @export
#' @examplesIf keras_available()
#' library(reticulate, include.only = "import")
#' keras <- import("keras")
#' model <- keras$Sequential(list(
#'   keras$Input(shape = list(4L)), keras$layers$Dense(2L)
#' ))
#' model$compile(optimizer = "sgd", loss = "mse")
#' dir <- tempfile()
#' cb <- checkpoint_callback(dir, every = 2, unit = "step", keep = 2)
#' x <- numpy_array(matrix(runif(32), 8))
#' model$fit(x, numpy_array(matrix(0, 8, 2)), batch_size = 2L, epochs = 2L,
#'           verbose = 0L, callbacks = list(cb))
#' checkpoint_info(dir)
#' unlink(dir, recursive = TRUE)
checkpoint_callback <- function(dir, every = 1, unit = c("epoch", "step"),
                                keep = NULL) {
  check_string(dir)
  every <- check_count(every)
  unit <- rlang::arg_match(unit)
  if (!is.null(keep)) {
    keep <- check_count(keep)
  }
  shim_call("checkpoint_callback.callback", path.expand(dir), every, unit,
            keep)
}

#' What a checkpoint directory holds
#'
#' Lists the steps of a checkpoint directory written by [save_checkpoint()]
#' or [checkpoint_callback()], whether each is complete (and why not), and
#' describes one step's variables: shape, data type and the layout they
#' were saved with (the mesh, and the mesh axis each dimension was split
#' over). Reads only metadata.
#'
#' @inheritParams save_checkpoint
#' @param step The step to describe: `NULL` for the newest complete one.
#' @return A `kerasmesh_checkpoint_info` object, a list:
#'   * `directory`: the absolute path.
#'   * `steps`: a data frame with columns `step`, `complete`, `problem`
#'     (why a step is incomplete, `NA` if complete) and `time` (when it was
#'     committed, `NA` if it was not).
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
checkpoint_info <- function(dir, step = NULL) {
  check_string(dir)
  step <- check_step(step)
  new_checkpoint_info(shim_call("checkpoint.info", path.expand(dir), step))
}

#' @export
format.kerasmesh_checkpoint_info <- function(x, ...) {
  steps <- x$steps
  n <- nrow(steps) # nolint: object_usage_linter. Read by cli.
  out <- c(
    paste("<kerasmesh_checkpoint_info>", x$directory),
    cli::pluralize("{n} step{?s}: {paste(ifelse(steps$complete,
                    steps$step, paste0(steps$step, ' (incomplete)')),
                    collapse = ', ')}")
  )
  for (i in which(!steps$complete)) {
    out <- c(out, sprintf("  step %s: %s", steps$step[i], steps$problem[i]))
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
      variable = truncate_right(vars$key, 44),
      shape = vapply(vars$shape, format_dims, ""),
      axes = vapply(vars$axes, format_axes_short, ""),
      dtype = vars$dtype,
      stringsAsFactors = FALSE
    )
    out <- c(out, format_table(table))
  }
  out
}

#' @export
print.kerasmesh_checkpoint_info <- function(x, ...) {
  writeLines(format(x, ...))
  invisible(x)
}

# Private helpers ------------------------------------------------------------

new_checkpoint_info <- function(desc) {
  steps <- desc$steps
  times <- vapply(steps$time, function(t) t %||% NA_real_, numeric(1))
  problems <- vapply(steps$problem, function(p) p %||% NA_character_, "")
  out <- list(
    directory = desc$directory,
    steps = data.frame(
      step = whole_numbers(steps$step),
      complete = as.logical(unlist(steps$complete)),
      problem = problems,
      time = as.POSIXct(times, origin = "1970-01-01"),
      stringsAsFactors = FALSE
    ),
    last_complete = isTRUE(desc$last_complete),
    step = desc[["step"]],
    epoch = desc$epoch,
    process_count = desc$process_count,
    variables = checkpoint_variables(desc$variables)
  )
  structure(out, class = "kerasmesh_checkpoint_info")
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

check_model <- function(x, arg = rlang::caller_arg(x),
                        call = rlang::caller_env()) {
  if (!inherits(x, "python.builtin.object")) {
    kerasmesh_abort(
      c("{.arg {arg}} must be a Keras model.",
        x = "Received {.obj_type_friendly {x}}."),
      kind = "argument", call = call
    )
  }
  invisible(x)
}

check_step <- function(x, arg = rlang::caller_arg(x),
                       call = rlang::caller_env()) {
  if (is.null(x)) {
    return(NULL)
  }
  if (!is.numeric(x) || length(x) != 1 || is.na(x) || x < 0 ||
      x != round(x)) {
    kerasmesh_abort(
      c("{.arg {arg}} must be a whole number (0 or more) or `NULL`.",
        x = "Received {.obj_type_friendly {x}}{received_value(x)}."),
      kind = "argument", call = call
    )
  }
  as.integer(x)
}
