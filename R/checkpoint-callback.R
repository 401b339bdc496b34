#' Save checkpoints while `fit()` trains
#'
#' A Keras callback that calls [save_checkpoint()] every `every` epochs or
#' steps (batches) of `fit()`, keeping the newest `keep` steps. Steps are
#' the optimizer's step count, which [restore_checkpoint()] restores: a run
#' resumed from a checkpoint saves at the same steps as the run it resumes.
#' In a run of several processes, give every process the callback; each
#' writes its own shards.
#'
#' By default the saves run in the background (`background = TRUE`), as
#' Keras's `OrbaxCheckpoint(save_on_background = TRUE)` does: training
#' stops only while the arrays are copied off the devices, and goes on
#' while the step is written, sealed, swapped in and pruned. One save runs
#' at a time: a save waits for the one before, and raises its error if it
#' failed (so `fit()` stops there); when `fit()` ends, the callback waits
#' for the last save and raises its error. Every guarantee of
#' [save_checkpoint()] holds for background saves too.
#'
#' A run starts from the model's step count when `fit()` begins. A run
#' resumed from a step of `dir` (restored by [restore_checkpoint()]) deletes,
#' at its first save, the steps kerasmesh saved after it (the rest of the
#' run it abandoned), so that the newest step is always this run's; steps
#' it saves replace kerasmesh's steps of the same number. A run that
#' starts from no step of `dir` (a new model, or one restored with
#' `weights_only = TRUE`, whose step count is 0) while `dir` holds newer
#' steps is refused when `fit()` starts, before it trains
#' (`kerasmesh_error_checkpoint_stale`): its saves would delete them.
#'
#' With `unit = "step"`, Keras shows the callback the model only after each
#' `steps_per_execution` steps (an argument of `compile()`): `every` must be
#' a multiple of it, or `fit()` stops at its start with the shim's error,
#' which is `kerasmesh_error_argument` when `fit()` runs inside
#' [with_kerasmesh_errors()] (Keras's `fit()` is Python's: R sees its
#' errors as reticulate's otherwise). When an execution cut short at the
#' end of an epoch passes a multiple of `every`, the callback saves where
#' it ends.
#'
#' `callback_checkpoint()` was called `checkpoint_callback()`, which works
#' for one more release with a `kerasmesh_warning_deprecated` warning.
#'
#' @inheritParams save_checkpoint
#' @param every Save every `every` epochs or steps.
#' @param unit `"epoch"` or `"step"`; anything else is
#'   `kerasmesh_error_argument`.
#' @param background Whether training goes on while a save is written
#'   (`TRUE`, the default), or waits for each save.
#' @param timeout Seconds each save may hold up training (waiting for the
#'   save before it included), and the end of `fit()` may wait for the
#'   last one; see [save_checkpoint()] for the default.
#' @param ... Must be empty.
#' @return A Keras callback (a Python object) for `fit()`'s `callbacks`.
#'   Its field `saved` lists the steps it saved.
#' @seealso [checkpoint_info()] to see what was saved, [checkpoint_wait()].
#' @export
#' @examplesIf keras_available()
#' library(reticulate, include.only = "import")
#' keras <- import("keras")
#' model <- keras$Sequential(list(
#'   keras$Input(shape = list(4L)), keras$layers$Dense(2L)
#' ))
#' model$compile(optimizer = "sgd", loss = "mse")
#' dir <- tempfile()
#' cb <- callback_checkpoint(dir, every = 2, unit = "step", keep = 2)
#' x <- numpy_array(matrix(runif(32), 8))
#' model$fit(x, numpy_array(matrix(0, 8, 2)), batch_size = 2L, epochs = 2L,
#'           verbose = 0L, callbacks = list(cb))
#' checkpoint_info(dir)
#' unlink(dir, recursive = TRUE)
callback_checkpoint <- function(dir, every = 1, unit = c("epoch", "step"),
                                keep = NULL, background = TRUE,
                                timeout = 3600, ...) {
  check_call()
  check_string(dir)
  every <- check_whole(every)
  unit <- check_choice(unit, c("epoch", "step"))
  keep <- check_whole(keep, allow_null = TRUE)
  check_flag(background)
  timeout <- check_timeout(timeout)
  if (background) {
    finish_checkpoints_at_exit()
  }
  shim_call("checkpoint.callback", directory = path.expand(dir),
            every = every, unit = unit, keep = keep, background = background,
            timeout = timeout)
}

#' @rdname callback_checkpoint
#' @usage NULL
#' @export
checkpoint_callback <- function(dir, every = 1, unit = c("epoch", "step"),
                                keep = NULL, background = TRUE,
                                timeout = 3600, ...) {
  check_dots_none()
  renamed_function("checkpoint_callback", "callback_checkpoint")
  callback_checkpoint(dir, every = every, unit = unit, keep = keep,
                      background = background, timeout = timeout)
}

#' Wait for a checkpoint saved in the background
#'
#' Waits until this R session's pending background save
#' (`save_checkpoint(background = TRUE)`, [callback_checkpoint()]) is
#' written, sealed and in its place, and raises its error if it failed:
#' the `kerasmesh_error_checkpoint_*` error the save would have raised in
#' the foreground (such as `kerasmesh_error_checkpoint_write` for a disk
#' that filled up; the steps saved before are then unchanged). With
#' nothing pending it returns at once. Each R session has at most one
#' pending save; R waits for it when it exits, too.
#'
#' @param timeout Seconds to wait; when the save is still running then,
#'   `kerasmesh_error_timeout`, and the save goes on. See
#'   [save_checkpoint()] for the default.
#' @param ... Must be empty.
#' @return Invisibly, what [save_checkpoint()] returns for the save waited
#'   for (`pending` is then `FALSE`), or `NULL` when nothing was pending.
#' @export
#' @examplesIf keras_available()
#' library(reticulate, include.only = "import")
#' keras <- import("keras")
#' model <- keras$Sequential(list(
#'   keras$Input(shape = list(4L)), keras$layers$Dense(2L, name = "dense")
#' ), name = "small")
#' dir <- tempfile()
#' save_checkpoint(model, dir, step = 1, background = TRUE)
#' # ... training goes on here ...
#' checkpoint_wait()
#' checkpoint_info(dir)$steps
#' unlink(dir, recursive = TRUE)
checkpoint_wait <- function(timeout = 3600, ...) {
  check_dots_none()
  timeout <- check_timeout(timeout)
  if (!python_started()) {
    return(invisible(NULL))
  }
  invisible(shim_call("checkpoint.wait", timeout = timeout))
}
