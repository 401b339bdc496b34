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
#' Writes are atomic, and nothing kerasmesh did not write is touched.
#' Orbax writes a step aside, into a temporary directory it renames once
#' every process has written its part; kerasmesh then seals it with a
#' marker, `kerasmesh_files.json`, listing every file with its size and
#' SHA-256 checksum, and only then puts it in place (with `overwrite =
#' TRUE`, the old step is moved away first and deleted last). A process
#' killed at any moment leaves the old or the new step complete; the next
#' save finishes or removes what a killed one left. Saves into one
#' directory take turns (a lock file, `.kerasmesh.lock`), so two processes
#' saving the same step never lose it: with `overwrite = FALSE` the second
#' gets `kerasmesh_error_checkpoint_exists`.
#'
#' A step is *complete* when its marker is there and every listed file
#' has its size and checksum; a step cut short or damaged (a file missing,
#' truncated or changed, a malformed marker) is incomplete, and
#' `restore_checkpoint()` without `step` takes the newest complete step,
#' with a `kerasmesh_warning_checkpoint_fallback` warning naming the newer
#' steps it passed over. Checking checksums reads the files of each step
#' it checks. See [checkpoint_info()].
#'
#' Only steps kerasmesh committed (with a marker, in a real directory) are
#' ever deleted (`keep`) or replaced (`overwrite`): a folder of yours
#' named `5/`, a step another tool wrote and a symbolic link are never
#' removed, renamed or followed for deleting; saving over one is
#' `kerasmesh_error_checkpoint_exists`. A symbolic link to a step is read
#' as that step.
#'
#' A restore checks first that the checkpoint's variables match the
#' model's (names, shapes and dtypes) and fit the model's layout, and
#' reads every array before it assigns any: when it fails, the model is
#' unchanged. Metrics are not saved. Build the model (under its
#' distribution, with the same layer names) and compile it before
#' restoring; the optimizer's slots are created if training has not
#' created them yet.
#'
#' @section Keras's own checkpoints:
#' The state is stored as Keras's state tree, so the two formats meet
#' halfway. `restore_checkpoint()` and `checkpoint_info()` read a
#' directory written by Keras's `keras.callbacks.OrbaxCheckpoint` (its
#' steps count epochs or batches as that callback does; its steps have no
#' layouts in `checkpoint_info()`), and Keras's `model$load_weights(dir)`
#' reads a kerasmesh checkpoint (build the optimizer first, or its state
#' is skipped). `keras$saving$load_model(dir)` can't load a kerasmesh
#' checkpoint: kerasmesh saves no model configuration (build the model in
#' R and restore into it). kerasmesh never prunes or replaces the steps
#' Keras wrote.
#'
#' @param model A Keras model, built (its variables exist).
#' @param dir The checkpoint directory, one subdirectory per step; created
#'   by `save_checkpoint()` when missing.
#' @param step The step to write, a whole number from 0 to
#'   2,147,483,647: `NULL` for the optimizer's step count (the number of
#'   batches trained). For `restore_checkpoint()`, the step to read: `NULL`
#'   for the newest complete one.
#' @param keep Keep only the newest `keep` complete steps, deleting
#'   kerasmesh's older ones (never the step just saved); `NULL` keeps all.
#' @param overwrite Whether to replace a step of the same number that
#'   kerasmesh saved.
#' @return `save_checkpoint()`: invisibly, a list with `step`, `epoch`,
#'   `path` and `variables` (the number saved). `restore_checkpoint()`:
#'   invisibly, the same for the step it read.
#' @section Errors:
#' * `kerasmesh_error_argument`: a `step` that is not a whole number from
#'   0 to 2,147,483,647 (the message names the value).
#' * `kerasmesh_error_checkpoint_directory`: `dir` holds no checkpoint, is
#'   a file, lies under a file or can't be created (the message names the
#'   path).
#' * `kerasmesh_error_checkpoint_incomplete`, `..._checkpoint_step`: no
#'   complete step, or the `step` asked for is missing, incomplete or
#'   damaged (the message names the step and the file).
#' * `kerasmesh_error_checkpoint_variables`,
#'   `kerasmesh_error_checkpoint_shape`,
#'   `kerasmesh_error_checkpoint_dtype`: the checkpoint's variables are not
#'   the model's (the message names the first that differs, and both
#'   shapes or dtypes).
#' * `kerasmesh_error_checkpoint_layout`: a saved shape can't be split as
#'   the model's layout says (the message names the variable).
#' * `kerasmesh_error_checkpoint_exists`: the step is saved already, or
#'   its folder is not a step kerasmesh saved.
#' * `kerasmesh_error_checkpoint_write`: the file system refused the write
#'   (disk full, permissions); nothing of the step is left behind.
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
  check_python_object(model, "a Keras model", show_value = FALSE)
  check_string(dir)
  step <- check_whole(step, min = 0, allow_null = TRUE)
  keep <- check_whole(keep, allow_null = TRUE)
  check_flag(overwrite)
  invisible(shim_call("checkpoint.save", model = model,
                      directory = path.expand(dir), step = step, keep = keep,
                      overwrite = overwrite))
}

#' @rdname save_checkpoint
#' @export
restore_checkpoint <- function(model, dir, step = NULL) {
  check_python_object(model, "a Keras model", show_value = FALSE)
  check_string(dir)
  step <- check_whole(step, min = 0, allow_null = TRUE)
  invisible(shim_call("checkpoint.restore", model = model,
                      directory = path.expand(dir), step = step))
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
#' A run starts from the model's step count when `fit()` begins: its first
#' save deletes the steps kerasmesh saved after it in `dir` (the rest of a
#' run abandoned by restoring an earlier step), so that the newest step is
#' always this run's. Steps it saves replace kerasmesh's steps of the same
#' number.
#'
#' With `unit = "step"`, Keras shows the callback the model only after each
#' `steps_per_execution` steps (an argument of `compile()`): `every` must be
#' a multiple of it, or `fit()` stops at its start with
#' `kerasmesh_error_argument`. When an execution cut short at the end of an
#' epoch passes a multiple of `every`, the callback saves where it ends.
#'
#' @inheritParams save_checkpoint
#' @param every Save every `every` epochs or steps.
#' @param unit `"epoch"` or `"step"`; anything else is
#'   `kerasmesh_error_argument`.
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
  every <- check_whole(every)
  unit <- check_choice(unit, c("epoch", "step"))
  keep <- check_whole(keep, allow_null = TRUE)
  shim_call("checkpoint_callback.callback", directory = path.expand(dir),
            every = every, unit = unit, keep = keep)
}
