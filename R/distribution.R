#' Distributions: data parallel and model parallel
#'
#' `data_parallel()` keeps a full copy of the model on every device and
#' splits each batch across them. `model_parallel()` splits variables as a
#' [layout_map()] says and splits each batch along the mesh's
#' `batch_dim_name` axis. Both are checked before Keras sees them.
#'
#' Unlike Keras 3.15's `DataParallel`, `data_parallel()` accepts a mesh of
#' rank 2 or more (Keras raises a `TypeError` there): the batch is split
#' over the mesh's first axis and the other axes hold further copies, with a
#' warning of class `kerasmesh_warning_mesh_rank`. Giving both `mesh` and
#' `devices` is an error rather than one of them being ignored.
#'
#' @param mesh A [device_mesh()]; `NULL` for a one-axis mesh (named
#'   `"batch"`) over `devices`.
#' @param devices `NULL` for all devices, a count, or device names.
#' @param layout_map A [layout_map()].
#' @param batch_dim_name The mesh axis the batch is split along; `NULL` for
#'   the mesh's first axis, as in Keras.
#' @param auto_shard_dataset Whether Keras shards datasets across processes.
#'   Set it to `FALSE` when each process feeds its own part of every batch.
#' @param ... Must be empty.
#' @return A `kerasmesh_distribution` object; `r_to_py()` (reticulate's) gives
#'   the Keras distribution.
#' @seealso [with_distribution()] to train under one.
#' @export
#' @examplesIf keras_available()
#' simulate_devices(8)
#' data_parallel()
#' mesh <- device_mesh(c(data = 2, model = 4))
#' lm <- layout_map(mesh, ".*dense.*kernel" = c(NA, "model"))
#' model_parallel(lm, batch_dim_name = "data")
data_parallel <- function(mesh = NULL, devices = NULL,
                          auto_shard_dataset = TRUE, ...) {
  check_dots_none()
  check_flag(auto_shard_dataset)
  shape <- NULL
  if (!is.null(mesh)) {
    mesh <- as_device_mesh(mesh)
    shape <- mesh_shape(mesh)
    mesh <- object_py(mesh)
  }
  devices <- check_devices(devices)
  made <- new_distribution(shim_call(
    "distribution.data_parallel", mesh = mesh, devices = devices,
    auto_shard_dataset = auto_shard_dataset
  ))
  # Said once the distribution is made (not before an error refusing it).
  if (length(shape) > 1) {
    kerasmesh_warn(
      c("{.fn data_parallel} splits the batch over the mesh's first axis
         only.",
        i = "Axis {.val {names(shape)[1]}} ({shape[1]}) splits the batch;
             {.val {names(shape)[-1]}} hold{?s/} copies.",
        i = "For data parallelism over all {prod(shape)} devices, pass a
             one-axis mesh or {.arg devices}."),
      kind = kinds$mesh_rank
    )
  }
  made
}

#' @rdname data_parallel
#' @export
model_parallel <- function(layout_map, batch_dim_name = NULL,
                           auto_shard_dataset = TRUE, ...) {
  check_call()
  layout_map <- as_layout_map(layout_map)
  if (!is.null(batch_dim_name)) {
    check_string(batch_dim_name)
  }
  check_flag(auto_shard_dataset)
  new_distribution(shim_call(
    "distribution.model_parallel", layout_map = object_py(layout_map),
    batch_dim_name = batch_dim_name,
    auto_shard_dataset = auto_shard_dataset
  ))
}

#' Set, get and scope the Keras distribution
#'
#' Keras creates variables, and splits batches, according to the current
#' global distribution. Create and compile a model *after* setting the
#' distribution (`compile()` makes the optimizer's step count and the
#' metrics' variables): while one is set, kerasmesh makes Keras's `fit()`,
#' `evaluate()`, `predict()` and `*_on_batch()` check first that the
#' variables they read live on the distribution's mesh — the same devices
#' in the same order, the same shape and axis names — and signal an error
#' of class
#' `kerasmesh_error_model_placement` instead of a late device error from
#' JAX ("incompatible devices").
#'
#' @section The guard comes and goes with the distribution:
#' The check wraps those methods of `keras.Model` only while a distribution
#' set by kerasmesh is in effect: `set_distribution(NULL)`, or leaving
#' `with_distribution()` or `local_distribution()` back to no distribution,
#' gives `keras.Model` its own methods back, so other code in the session
#' sees plain Keras.
#'
#' @section Errors from direct calls:
#' Inside `with_distribution()`, Python errors become R conditions of the
#' kerasmesh classes. A call such as `model$fit()` made outside it (after
#' `set_distribution()`) goes from R straight to Keras, so its error reaches
#' R the way reticulate signals it: of class `Rcpp::exception` on
#' reticulate 1.28, `python.builtin.ValueError` from 1.29. Wrap the call in
#' [with_kerasmesh_errors()] to get `kerasmesh_error_model_placement` (and
#' the other kerasmesh classes) on every version.
#'
#' Under a [model_parallel()] distribution these methods also check the
#' model's layout first (see [check_layout()]): a layout problem that
#' would crash is an error naming the variable and the rule. Turn this off,
#' and the check of batches, with `options(kerasmesh.check_layout =
#' FALSE)`.
#'
#' @section Batches:
#' Keras splits every batch over the distribution's batch axis (the
#' mesh's first axis under [data_parallel()]), and JAX can't split one the
#' axis doesn't divide: it fails at the first step, or at the end of the
#' first epoch for a last partial batch or for validation data. kerasmesh
#' does not drop or pad samples: under either distribution, `fit()`,
#' `evaluate()` and `predict()` on arrays check every batch they will feed
#' before they start, and signal `kerasmesh_error_batch_size`, naming the
#' data, the batch size, what is left over and the fix:
#' * the batch size (`batch_size`, 32 when not given) must be a multiple
#'   of the batch axis's size, and so must `validation_batch_size`;
#' * the last batch of each epoch too: the sample count must be a
#'   multiple of the axis's size (100 rows can't be trained on 8 devices in
#'   any batch size; 96 or 104 can);
#' * `validation_split` splits the samples as Keras does (the first
#'   `floor(n * (1 - validation_split))` train), and both parts must
#'   divide; `validation_data` is checked with its own sample count.
#'
#' Datasets and generators are batched by Keras itself, and calls with
#' `steps_per_epoch` (or `steps`) stop before a last batch: their last
#' batches are not checked.
#'
#' @section Quantizing:
#' Keras's `model$quantize("int8")` makes new variables for the quantized
#' kernels, and Keras places a new variable by the distribution in effect
#' when it is made. Quantize a sharded model inside its distribution,
#' `with_distribution(dist, model$quantize("int8"))`, and the int8 kernels
#' keep the layout. Outside it they would land on one device: for a model
#' made or trained while a kerasmesh distribution was set, `quantize()`
#' then warns first, with class `kerasmesh_warning_quantize_placement`.
#'
#' `with_distribution()` and `local_distribution()` follow withr: they set
#' the distribution for the duration of `code` or of the calling function,
#' and restore the previous one afterwards, also when an error occurs.
#'
#' @param x A distribution from [data_parallel()] or [model_parallel()] (or
#'   a Keras one), or `NULL` for none.
#' @param code Code to run with the distribution set.
#' @param .local_envir The environment whose exit restores the previous
#'   distribution.
#' @return `set_distribution()`: the previous distribution, invisibly.
#'   `get_distribution()`: the current one or `NULL`. `with_distribution()`:
#'   the value of `code`. `local_distribution()`: the previous distribution,
#'   invisibly.
#' @export
#' @examplesIf keras_available()
#' simulate_devices(8)
#' dist <- data_parallel()
#' with_distribution(dist, {
#'   library(reticulate, include.only = "import")
#'   keras <- import("keras")
#'   model <- keras$Sequential(list(
#'     keras$Input(shape = list(4L)),
#'     keras$layers$Dense(2L)
#'   ))
#' })
#' variable_sharding(model)
#' get_distribution()
set_distribution <- function(x, ...) {
  check_call()
  previous <- swap_distribution(x)
  invisible(wrap_distribution(previous))
}

#' @param ... Must be empty.
#' @rdname set_distribution
#' @export
get_distribution <- function(...) {
  check_dots_none()
  wrap_distribution(shim_call("distribution.get_distribution"))
}

#' @rdname set_distribution
#' @export
with_distribution <- function(x, code, ...) {
  check_call()
  previous <- swap_distribution(x)
  on.exit(swap_distribution(previous$distribution), add = TRUE)
  with_python_errors(code)
}

#' @rdname set_distribution
#' @export
local_distribution <- function(x, .local_envir = parent.frame(), ...) {
  check_call()
  if (!is.environment(.local_envir)) {
    stop_input_type(.local_envir, "an environment", show_value = FALSE)
  }
  previous <- swap_distribution(x)
  withr::defer(swap_distribution(previous$distribution),
               envir = .local_envir)
  invisible(wrap_distribution(previous))
}

#' @export
format.kerasmesh_distribution <- function(x, ...) {
  check_dots_none()
  check_unedited(x)
  with_edits_named(x, {
    title <- switch(.subset2(x, "type"),
      data_parallel = "data parallel",
      model_parallel = "model parallel",
      .subset2(x, "class")
    )
    mesh <- .subset2(x, "mesh")
    out <- c(
      sprintf("<kerasmesh_distribution> %s", title),
      sprintf("Mesh: %s", mesh_summary(mesh)),
      sprintf("Batch split along: %s (%s)", .subset2(x, "batch_dim_name"),
              ways_text(mesh_shape(mesh)[[.subset2(x, "batch_dim_name")]]))
    )
    if (!.subset2(x, "auto_shard_dataset")) {
      out <- c(out, "Datasets: fed per process (auto_shard_dataset = FALSE)")
    }
    lm <- .subset2(x, "layout_map")
    if (!is.null(lm)) {
      out <- c(out, if (length(lm)) "Rules:" else "Rules: none",
               utils::tail(format(lm), -1))
    }
    out
  })
}

#' @export
print.kerasmesh_distribution <- function(x, ...) {
  writeLines(format(x, ...))
  invisible(x)
}

new_distribution <- function(desc) {
  stamp_fields(structure(
    list(
      py = desc$distribution,
      type = desc$type,
      class = desc$class,
      mesh = new_device_mesh(desc$mesh),
      batch_dim_name = desc$batch_dim_name,
      auto_shard_dataset = desc$auto_shard_dataset,
      layout_map = if (!is.null(desc$layout_map)) {
        new_layout_map(desc$layout_map)
      }
    ),
    class = c(paste0("kerasmesh_", desc$type), "kerasmesh_distribution",
              "kerasmesh_object")
  ))
}

# Sets the Keras distribution to `x` (a kerasmesh or Keras distribution,
# or NULL) and, in the same call, whether training checks the layout
# (`kerasmesh.check_layout`); returns the shim's description of the
# previous one (NULL for none; its `distribution` restores it). One trip:
# the shim refuses a Python object that is not a distribution.
swap_distribution <- function(x, arg = rlang::caller_arg(x),
                              call = rlang::caller_env()) {
  py <- check_distribution(x, check_python = FALSE, arg = arg,
                              call = call)
  result <- shim_call("distribution.set_distribution", dist = py,
                      check_layout = layout_checks_enabled(call), call = call)
  if (!isTRUE(result$set)) {
    abort_wrong_distribution(x, arg, call)
  }
  result$previous
}

wrap_distribution <- function(desc) {
  if (is.null(desc)) {
    return(NULL)
  }
  new_distribution(desc)
}

# The Keras distribution of `x` (NULL for NULL where `allow_null`). The
# shim checks that a Python object is a distribution, unless
# `check_python` is FALSE: for callers whose own shim call checks it.
check_distribution <- function(x, allow_null = TRUE, check_python = TRUE,
                               arg = rlang::caller_arg(x),
                               call = rlang::caller_env()) {
  if (is.null(x)) {
    if (!allow_null) {
      kerasmesh_abort(
        c("{.arg {arg}} must be a distribution.", x = "Received `NULL`.",
          i = "Create one with {.fn data_parallel} or {.fn model_parallel}."),
        kind = kinds$distribution, call = call
      )
    }
    return(NULL)
  }
  if (inherits(x, "kerasmesh_distribution")) {
    check_unedited(x, prefix = arg, call = call)
    return(object_py(x, arg = arg, call = call))
  }
  if (inherits(x, "python.builtin.object") &&
        (!check_python || object_type(x) == "distribution")) {
    return(x)
  }
  abort_wrong_distribution(x, arg, call, allow_null = allow_null)
}

abort_wrong_distribution <- function(x, arg, call, allow_null = TRUE) {
  stop_input_type(
    x, if (allow_null) "a distribution or `NULL`" else "a distribution",
    show_value = FALSE,
    way_out = "Create one with {.fn data_parallel} or {.fn model_parallel}.",
    kind = kinds$distribution, arg = arg, call = call
  )
}
