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
#' CRC-32 checksum, and only then puts it in place (with `overwrite =
#' TRUE`, the old step is moved away first and deleted last). A process
#' killed at any moment leaves the old or the new step complete; the next
#' save finishes or removes what a killed one left. Saves into one
#' directory take turns (a lock file, `.kerasmesh.lock`), so two processes
#' saving the same step never lose it: with `overwrite = FALSE` the second
#' gets `kerasmesh_error_checkpoint_exists`.
#'
#' A step is *complete* when its marker is there, lists Orbax's record of
#' the step, and every listed file has its size and checksum; a step cut
#' short or damaged (a file missing, truncated or changed, a malformed
#' marker, a marker over a folder Orbax did not write) is incomplete, and
#' so is one whose intact files Orbax can't read; and
#' `restore_checkpoint()` without `step` takes the newest complete step,
#' with a `kerasmesh_warning_checkpoint_fallback` warning naming the newer
#' steps it passed over. See [checkpoint_info()].
#'
#' @section Checksums at scale:
#' Each process hashes the files it wrote itself, over several threads,
#' once its write is done, and process 0 combines the records into the
#' marker, so sealing a large model costs each process its own share.
#' Nothing re-hashes a step to prune it: `keep` judges the older steps by
#' their marker and file sizes (the step just saved is never deleted, and
#' its checksums were taken as it was written). `restore_checkpoint()`
#' checks the checksums of the step it reads while Orbax reads it, and
#' assigns nothing before both are done; a step found damaged is passed
#' over as above. [checkpoint_info()] checks every step's checksums.
#' The marker holds each file's size, which finds a file missing or cut
#' short, and the CRC-32 of each 64 MiB range of it, which finds changed
#' bytes (every change of up to 32 consecutive bits; any other but for a
#' chance of 2^-32), read over several threads. It guards against damage
#' (a disk, a copy, a killed writer), not forgery, and takes half the CPU
#' time of SHA-256: time a background save takes from training.
#'
#' @section Storage:
#' Arrays are written uncompressed. A training state's floats are close to
#' random bytes: Orbax's default, zstd, saves under a tenth of the space
#' (8% on a trained model's weights and Adam slots) and doubles the CPU
#' time of the write, which a background save takes from training and the
#' next save may have to wait for. Orbax, Keras and kerasmesh read
#' compressed and uncompressed steps alike.
#'
#' @section Background saves:
#' With `background = TRUE`, `save_checkpoint()` returns once the arrays
#' are copied off the devices (into the host's memory); the step is
#' written, sealed, swapped in and pruned in a Python thread while R (and
#' training) go on, as Keras's `OrbaxCheckpoint(save_on_background =
#' TRUE)` and Orbax's `AsyncCheckpointer` do. The save holds the
#' directory's lock from the call until the step is in place and pruned,
#' and no longer; every guarantee above holds: a process killed at any
#' moment leaves the newest complete step restorable. One save runs at a
#' time:
#' the next save (of any directory), `restore_checkpoint()` of the same
#' directory and [checkpoint_wait()] wait for the pending one, and raise
#' its error (a `kerasmesh_error_checkpoint_*` error, such as
#' `kerasmesh_error_checkpoint_write` for a disk that filled up) if it
#' failed. R waits for a pending save when it exits. A directory removed
#' or moved while its save runs fails that save
#' (`kerasmesh_error_checkpoint_directory`) rather than sealing the step
#' in a directory made anew.
#'
#' @section What goes on while R runs R code:
#' The thread needs Python's lock (the GIL) for its Python parts, and how
#' R shares that lock depends on reticulate's version:
#' * reticulate 1.39 and later give the lock back whenever R returns from
#'   Python: the save runs beside R code, [Sys.sleep()] and R's prompt.
#' * Earlier reticulate (1.28, Debian 12's) keeps the lock in R's thread
#'   while R runs R code. While a background save is pending, kerasmesh
#'   lends it to the save from R's event loop: every 20 milliseconds while
#'   R evaluates R code, and while [Sys.sleep()] waits or an interactive
#'   console waits for input (R then checks its events every 10
#'   milliseconds, as the tcltk package has it). R code runs a little
#'   slower meanwhile; the lending ends with the save.
#'
#' On both, the step reaches the disk and the lock is released without R
#' calling into Python, and a save into the same directory by another
#' process waits only for the write. What no version reaches: one long
#' call of R into C code that does not check for interrupts (a
#' [system()] call waiting for a program, a single large matrix
#' product); with reticulate before 1.39 the save waits for it to return.
#' Where kerasmesh can't reach R's event loop (R on Windows, whose event
#' loop is another), a save with reticulate before 1.39 goes on only while
#' R is inside a Python call, and [checkpoint_wait()] finishes it.
#'
#' @section Multi-process saves:
#' Every process writes its shards and hashes its files; process 0 seals
#' and swaps in the step only once every process reported success (through
#' JAX's distributed key-value store, from the background thread), and
#' every process raises when one failed, so the processes agree.
#'
#' @section The lock and `timeout`:
#' Saves into one directory take turns on `.kerasmesh.lock`, which names
#' the process (id and host) holding it. A save waits for it at most until
#' its `timeout`, and then is `kerasmesh_error_checkpoint_lock`, naming the
#' lock file and who may hold it; Ctrl-C stops the wait. `timeout` counts
#' the whole call, waiting for the lock and for a pending save included.
#' Its default, an hour, is sized for a large model: a 70-billion-parameter
#' model with Adam's state is about 1.1 TB, which one process writing at
#' 1 GB/s takes some 18 minutes to write and another writer of the same
#' directory may hold the lock as long; a background save's call is short
#' (the copy off the devices), but may first wait for the save before it.
#' When a foreground save's write outlasts `timeout`, the call is
#' `kerasmesh_error_timeout` and the save goes on in the background
#' ([checkpoint_wait()] waits for it). `restore_checkpoint()`'s `timeout`
#' bounds the read the same way; the model is unchanged when it passes.
#'
#' A run resumed from an earlier step (with [restore_checkpoint()]) saves
#' steps numbered below the abandoned run's newer ones, which a restore
#' would read first and `keep` would keep in their place. So a save below
#' a complete step kerasmesh saved is
#' `kerasmesh_error_checkpoint_stale`, naming the newer steps; with
#' `overwrite = TRUE` it saves its step and then deletes them (before
#' `keep` counts), so that the newest step is this run's.
#' [callback_checkpoint()] does so at a resumed run's first save.
#'
#' Only steps kerasmesh committed (with a marker, in a real directory) are
#' ever deleted (`keep`, `overwrite`): a folder of yours
#' named `5/`, a step another tool wrote, a step holding files put there
#' after it was saved and a symbolic link are never
#' removed, renamed or followed for deleting; saving over one is
#' `kerasmesh_error_checkpoint_exists`. A symbolic link to a step is read
#' as that step. A `dir` inside a step of another checkpoint directory is
#' refused, since pruning that directory would delete it.
#'
#' A restore checks first that the checkpoint's variables match the
#' model's (names, shapes and dtypes) and fit the model's layout, and
#' reads every array before it assigns any: when it fails, the model is
#' unchanged. Metrics are not saved. Build the model (under its
#' distribution, with the same layer names) and compile it before
#' restoring; the optimizer's slots are created if training has not
#' created them yet. With `weights_only = TRUE`, only the model's weights
#' (its trainable and non-trainable variables) are restored, and the
#' optimizer's state and step count are left as they are: for a model
#' whose optimizer's slots differ from the saved ones (a model quantized
#' after `compile()` keeps the slots of its float kernels; another
#' optimizer has other slots). When only the optimizer's state differs,
#' the error says so and points to `weights_only`.
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
#' @param overwrite Whether to replace kerasmesh's steps in the way: one
#'   of the same number, and the complete ones numbered after `step` (a run
#'   resumed from an earlier step leaves the abandoned run's; see below),
#'   which the save deletes once its step is in place.
#' @param background Whether to return once the arrays are copied off the
#'   devices, writing the step in the background (see below).
#' @param weights_only Whether to restore the model's weights alone,
#'   leaving the optimizer's state as it is.
#' @param timeout Seconds the whole call may take (see below): an hour
#'   by default.
#' @return `save_checkpoint()`: invisibly, a list with `step`, `epoch`,
#'   `path`, `variables` (the number saved) and `pending` (whether the
#'   save goes on in the background). `restore_checkpoint()`: invisibly,
#'   the same for the step it read.
#' @section Errors:
#' * `kerasmesh_error_argument`: a `step` that is not a whole number from
#'   0 to 2,147,483,647 (the message names the value).
#' * `kerasmesh_error_checkpoint_directory`: `dir` holds no checkpoint, is
#'   a file, lies under a file or in a step of another checkpoint
#'   directory, or can't be created, or was removed or
#'   moved while a background save wrote into it (the message names the
#'   path; nothing of the step is sealed).
#' * `kerasmesh_error_checkpoint_incomplete`, `..._checkpoint_step`: no
#'   complete step, or the `step` asked for is missing, incomplete,
#'   damaged or can't be read by Orbax (the message names the step and the
#'   file, or Orbax's error).
#' * `kerasmesh_error_checkpoint_variables`,
#'   `kerasmesh_error_checkpoint_shape`,
#'   `kerasmesh_error_checkpoint_dtype`: the checkpoint's variables are not
#'   the model's (the message names the first that differs, and both
#'   shapes or dtypes).
#' * `kerasmesh_error_checkpoint_layout`: a saved shape can't be split as
#'   the model's layout says (the message names the variable).
#' * `kerasmesh_error_checkpoint_exists`: the step is saved already, or
#'   its folder is not a step kerasmesh saved or holds files it was not
#'   saved with.
#' * `kerasmesh_error_checkpoint_stale`: `dir` holds complete steps
#'   kerasmesh saved that are newer than `step` (the message names them);
#'   nothing is written. `overwrite = TRUE` saves the step and deletes
#'   them, unless one is a step kerasmesh may not delete (it holds files
#'   added since it was saved, or is a symbolic link): then nothing is
#'   written either.
#' * `kerasmesh_error_checkpoint_write`: the file system refused the write
#'   (disk full, a file-size limit, permissions); nothing of the step is
#'   left behind.
#' * `kerasmesh_error_checkpoint_lock`: another writer held the
#'   directory's lock for the whole `timeout`.
#' * `kerasmesh_error_timeout`: the call took longer than `timeout`.
#' @seealso [callback_checkpoint()] to save while `fit()` runs,
#'   [checkpoint_wait()], [checkpoint_info()]; the "Checkpoints" section of
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
                            overwrite = FALSE, background = FALSE,
                            timeout = 3600, ...) {
  check_call()
  check_python_object(model, "a Keras model", show_value = FALSE)
  check_string(dir)
  step <- check_whole(step, min = 0, allow_null = TRUE)
  keep <- check_whole(keep, allow_null = TRUE)
  check_flag(overwrite)
  check_flag(background)
  timeout <- check_timeout(timeout)
  if (background) {
    finish_checkpoints_at_exit()
  }
  invisible(shim_call("checkpoint.save", model = model,
                      directory = path.expand(dir), step = step, keep = keep,
                      overwrite = overwrite, background = background,
                      timeout = timeout))
}

#' @param ... Must be empty.
#' @rdname save_checkpoint
#' @export
restore_checkpoint <- function(model, dir, step = NULL, weights_only = FALSE,
                               timeout = 3600, ...) {
  check_call()
  check_python_object(model, "a Keras model", show_value = FALSE)
  check_string(dir)
  step <- check_whole(step, min = 0, allow_null = TRUE)
  check_flag(weights_only)
  timeout <- check_timeout(timeout)
  invisible(shim_call("checkpoint.restore", model = model,
                      directory = path.expand(dir), step = step,
                      weights_only = weights_only, timeout = timeout))
}

# Private helpers ------------------------------------------------------------

# When R exits, a pending background save is finished (Python's own exit
# may never run inside R): a finalizer registered once, on the first
# background save.
finish_checkpoints_at_exit <- function() {
  if (is.null(the$checkpoint_waiter)) {
    the$checkpoint_waiter <- new.env()
    reg.finalizer(the$checkpoint_waiter, function(e) {
      finish_pending_checkpoints()
    }, onexit = TRUE)
  }
  invisible()
}

# Waits for the pending background save, if any, saying when it failed.
finish_pending_checkpoints <- function() {
  if (python_started()) {
    failed <- tryCatch({
      shim_call("checkpoint.wait", timeout = NULL)
      NULL
    }, error = conditionMessage)
    if (!is.null(failed)) {
      message("kerasmesh: a background checkpoint save failed: ", failed)
    }
  }
  invisible()
}
