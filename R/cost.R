#' What one training step costs each device, from XLA, without allocating
#'
#' Compiles one training step of `model` for the distribution's mesh, with
#' every weight, optimizer variable and batch given only by its shape,
#' dtype and layout, and reports what XLA says one device needs: memory for
#' the weights, the optimizer state, the batch, the gradients and
#' activations held during the step, and the collectives (all-reduce,
#' all-gather, reduce-scatter, all-to-all, collective-permute) the layout
#' forces every step, with the mesh axes each runs over. Nothing of the
#' model's size is allocated: a model of billions of parameters is costed in
#' seconds on a laptop.
#'
#' @section How the step is compiled:
#' The model is built shape-only (as [layout_plan()] does) and its
#' variables are placed by the planner, so the weight and optimizer bytes
#' equal [layout_plan()]'s; a layout or batch size the planner rejects
#' gives the planner's error (such as `kerasmesh_error_layout_divisibility`
#' or `kerasmesh_error_batch_size`) before anything is compiled. The step
#' is the one Keras's JAX trainer runs: the forward pass with
#' `stateless_call()`, the gradient of the loss, the optimizer's update,
#' jitted with the state donated and laid out as the distribution lays it
#' out, inside the distribution's scope, on abstract arguments
#' (`jax.ShapeDtypeStruct` with their `NamedSharding`). XLA's
#' `memory_analysis()` and the compiled HLO give the figures. Collectives
#' inside loops are counted once per appearance in the program.
#'
#' @section Rematerialization and micro-batches:
#' With `remat`, each block (a transformer layer) runs under
#' `jax.checkpoint` in the compiled step, so the backward pass recomputes
#' what the block did not keep: the memory of the activations drops and the
#' step does more operations. `recompute_flops` is the part of `flops` spent
#' recomputing: the step is traced once more without remat, XLA counts the
#' operations of both unoptimized programs, and the share their difference
#' makes of the count with remat is applied to the compiled step's own
#' `flops` (per device, after XLA split the step over the mesh).
#'
#' With `accumulation_steps` k, the compiled step takes a micro-batch of
#' `batch_size / k` samples, and its optimizer is the given one with Keras's
#' `gradient_accumulation_steps = k` (replacing the optimizer's own
#' setting): it sums k steps' gradients in accumulators, one per trainable
#' variable and laid out as that variable, counted in `optimizer`, and
#' updates the weights every k-th step. The micro-batch must split evenly
#' over the batch axis. `inputs`, `activations`, `flops` and the
#' collectives are those of one micro-step; a global batch runs k of them.
#' The plan in `plan` is of the micro-step too:
#' `layout_plan(batch_size = batch_size / k)` gives the same batch, without
#' the accumulators.
#'
#' @section The timeout:
#' `timeout` is wall time from the call: starting Python (on the first
#' call), building the model, planning, tracing the step and compiling it
#' all count. When it passes, `layout_cost()` signals an error of class
#' `kerasmesh_error_timeout` that says what was running, within a moment
#' of `timeout`, and the session stays usable:
#' * an R builder is stopped where it stands (by R's `setTimeLimit()`, set
#'   around it and reset after it: a time limit of your own set with
#'   `setTimeLimit()` is cleared then);
#' * Python code (a builder's call into Python, a layer that traces
#'   slowly) is stopped at the next Python instruction: kerasmesh raises
#'   an exception in it. A single call into C that does not return to
#'   Python (one long NumPy or XLA operation) can't be stopped: the error
#'   comes when it returns;
#' * XLA's compiler can't be interrupted at all. It runs in a background
#'   thread; at the deadline `layout_cost()` stops waiting and the thread
#'   finishes its compile in the background, using a CPU core until it
#'   does, and its result is dropped. This thread is the only thing that
#'   keeps running after a timeout; R waits for it when it exits.
#'
#' @param model A built Keras model, or a function of no arguments that
#'   builds and returns one (preferred: it is built shape-only). The model
#'   must have known inputs (a functional or Sequential model); it may have
#'   several inputs and outputs.
#' @param distribution A [data_parallel()] or [model_parallel()]
#'   distribution (or the Keras one they wrap).
#' @param batch_size The global batch size of the step.
#' @param optimizer An optimizer name such as `"adam"` or a Keras
#'   optimizer; `NULL` for the model's compiled optimizer, or plain SGD
#'   (no slots) when it has none.
#' @param loss A loss name such as `"mse"` or a Keras loss, or a list of
#'   them (one per output, or named by output); `NULL` for the model's
#'   compiled loss. A model without one (a backbone) is differentiated
#'   through a stand-in: the mean of each output, summed over outputs. Targets
#'   have the outputs' shapes (for losses named `sparse_*`, without the last
#'   dimension, as integers).
#' @param input_shapes A named list giving, for inputs with dimensions of
#'   unknown size, their shape without the batch dimension, such as
#'   `list(token_ids = 128, padding_mask = 128)`.
#' @param remat What each block recomputes in the backward pass (see
#'   [set_remat()] for the choices and what a block is): `"none"`,
#'   `"save_matmuls"` or `"full"`, applied to the model's blocks for this
#'   step only; `NULL` for the model as it is (the choice [set_remat()]
#'   applied to it, else `"none"`).
#' @param accumulation_steps Micro-batches per optimizer update (Keras's
#'   `gradient_accumulation_steps`): a whole number that divides
#'   `batch_size`. `batch_size` stays the global batch; see below.
#' @param ... Must be empty.
#' @param timeout Seconds the whole call may take (see below).
#' @return A `kerasmesh_layout_cost` object, a list with
#'   * `memory`: bytes per device, named `weights`, `optimizer`, `inputs`
#'     (the device's part of the batch and targets), `activations`
#'     (gradients and activations: XLA's temporaries), `outputs` (what the
#'     step returns beyond the updated state, which reuses the donated
#'     buffers) and `total`;
#'   * `xla`: XLA's own figures per device, `argument`, `output`, `alias`
#'     (outputs that reuse argument buffers), `temp`, `generated_code` and
#'     `total` (argument + output - alias + temp);
#'   * `collectives`: a data frame, one row per kind and set of mesh axes,
#'     with `kind`, `axes` (joined with `"+"`), `count` and `bytes` per
#'     device per step (the size of each collective's result, and for a
#'     reduce-scatter, of the array it reduces);
#'   * `traffic`: bytes per device per step by mesh axis;
#'   * `ops`: every collective: `kind`, `axes`, `shapes`, `bytes`, `groups`;
#'   * `attribution`: traffic per variable ([summary.kerasmesh_layout_cost()]);
#'   * `plan`: the planner's totals (see [layout_plan()]); `mesh`;
#'     `distribution`; `batch_size`; `batch_dim_name`; `loss`; `inputs`;
#'     `compile_seconds`; `versions` (Keras, JAX, jaxlib, XLA backend);
#'     `warnings` (the plan's warnings: see [check_layout()]);
#'   * `remat` (the choice in effect), `accumulation_steps`,
#'     `micro_batch_size` (samples per compiled step), `flops` (XLA's count
#'     of floating-point operations per device per compiled step) and
#'     `recompute_flops` (the part of them spent recomputing; 0 without
#'     remat).
#' @seealso [compare_layouts()] for several layouts side by side;
#'   [layout_plan()] for the variables alone.
#' @export
#' @examplesIf keras_available()
#' simulate_devices(8)
#' mesh <- device_mesh(c(data = 2, model = 4))
#' lm <- layout_map(mesh, ".*dense.*kernel" = c(NA, "model"),
#'                  ".*dense.*bias" = "model")
#' library(reticulate, include.only = "import")
#' keras <- import("keras")
#' build <- function() {
#'   keras$Sequential(list(
#'     keras$Input(shape = list(32L)),
#'     keras$layers$Dense(64L, activation = "relu"),
#'     keras$layers$Dense(16L)
#'   ))
#' }
#' cost <- layout_cost(build, model_parallel(lm), batch_size = 16,
#'                     optimizer = "adam", loss = "mse")
#' cost
#' print(cost, device_memory = "16GB")
#' plot(cost)
layout_cost <- function(model, distribution, batch_size, optimizer = NULL,
                        loss = NULL, input_shapes = NULL, remat = NULL,
                        accumulation_steps = 1, ..., timeout = 300) {
  check_dots_none()
  cost_layout(model, distribution, batch_size, optimizer, loss, input_shapes,
              timeout = timeout, started = elapsed_seconds(),
              call = rlang::current_env(), remat = remat,
              accumulation_steps = accumulation_steps)
}

# layout_cost() for a call that started at `started` (elapsed_seconds()):
# `timeout` counts from then, through building, tracing and compiling.
cost_layout <- function(model, distribution, batch_size, optimizer = NULL,
                        loss = NULL, input_shapes = NULL, timeout = 300,
                        started = elapsed_seconds(),
                        call = rlang::caller_env(), remat = NULL,
                        accumulation_steps = 1) {
  check_plan_model(model, arg = "model", call = call)
  distribution <- cost_distribution_arg(distribution, call = call)
  batch_size <- check_whole(batch_size, call = call)
  levers <- cost_levers_args(remat, accumulation_steps, batch_size, call)
  step <- cost_step_args(optimizer, loss, input_shapes, timeout, call)
  timeout <- step$timeout
  cost_of <- function(model) {
    shim_call(
      "cost.layout_cost", model = model, distribution = distribution,
      batch_size = batch_size, optimizer = step$optimizer, loss = step$loss,
      input_shapes = step$input_shapes, timeout = timeout,
      spent = elapsed_seconds() - started, remat = levers$remat,
      accumulation_steps = levers$accumulation_steps, call = call
    )
  }
  new_layout_cost(with_plan_model(model, cost_of, deadline = started + timeout,
                                  timeout = timeout, arg = "model",
                                  call = call))
}

#' Compare layouts by what one training step costs
#'
#' Runs [layout_cost()] for each distribution and puts the results side by
#' side: memory per device and the bytes each device sends over each mesh
#' axis per step, and whether each fits a device's memory.
#'
#' @inheritParams layout_cost
#' @param layouts A named list of distributions ([data_parallel()],
#'   [model_parallel()]).
#' @param ... Passed to [layout_cost()]: `optimizer`, `loss`,
#'   `input_shapes`, `timeout`. `timeout` is for the whole comparison,
#'   from the call. An error costing one layout names the layout (by name
#'   and position) and keeps the class of the error it wraps, which is its
#'   `parent`; a layout that is not a distribution is an error before any
#'   layout is costed.
#' @param device_memory The memory of one device: bytes, or a string such
#'   as `"80GB"` or `"16 GiB"`; `NULL` to leave out the `fits` column.
#' @return A `kerasmesh_layout_comparison`: a data frame with one row per
#'   layout and columns `layout`, `mesh`, `weights`, `optimizer`, `inputs`,
#'   `activations`, `outputs`, `total` (bytes per device), `traffic` (bytes
#'   per device per step, all collectives), `collectives` (their count),
#'   `compile_seconds` and, with `device_memory`, `fits`. Attribute
#'   `traffic` holds the traffic per layout, mesh axis and kind, and
#'   `costs` the [layout_cost()] results.
#' @export
#' @examplesIf keras_available()
#' simulate_devices(8)
#' mesh <- device_mesh(c(data = 2, model = 4))
#' lm <- layout_map(mesh, ".*dense.*kernel" = c(NA, "model"),
#'                  ".*dense.*bias" = "model")
#' library(reticulate, include.only = "import")
#' keras <- import("keras")
#' build <- function() {
#'   keras$Sequential(list(
#'     keras$Input(shape = list(32L)),
#'     keras$layers$Dense(64L, activation = "relu"),
#'     keras$layers$Dense(16L)
#'   ))
#' }
#' layouts <- list(data_parallel = data_parallel(),
#'                 model_parallel = model_parallel(lm))
#' cmp <- compare_layouts(build, layouts, batch_size = 16,
#'                        optimizer = "adam", loss = "mse",
#'                        device_memory = "1MB")
#' cmp
#' plot(cmp)
compare_layouts <- function(model, layouts, batch_size, ...,
                            remat = NULL, accumulation_steps = 1,
                            device_memory = NULL) {
  call <- rlang::current_env()
  if (!is.list(layouts) || inherits(layouts, "kerasmesh_object") ||
      length(layouts) == 0 || is.null(names(layouts)) ||
      anyNA(names(layouts)) || any(!nzchar(names(layouts))) ||
      anyDuplicated(names(layouts))) {
    stop_input_type(
      layouts, "a list of distributions with unique names",
      show_value = FALSE,
      way_out = "For example {.code list(dp = data_parallel(),
             mp = model_parallel(lm))}.",
      call = call
    )
  }
  check_plan_model(model, arg = "model", call = call)
  limit <- parse_limit(device_memory)
  batch_size <- check_whole(batch_size)
  started <- elapsed_seconds()
  for (name in names(layouts)) {
    layouts[[name]] <- cost_distribution_arg(
      layouts[[name]], arg = paste0("layouts$", name), call = call
    )
  }
  levers <- cost_levers_args(remat, accumulation_steps, batch_size, call)
  costs <- cost_layouts(model, layouts, batch_size, started, call, ...,
                        levers = levers)
  new_layout_comparison(costs, limit)
}

# Every layout of compare_layouts() in one shim call: the model is built
# once and the compiles run in one Python loop (the loop search_layout()'s
# shim reuses). An error costing one layout names it (its kerasmesh classes
# kept, with the original as the parent).
cost_layouts <- function(model, layouts, batch_size, started, call,
                         optimizer = NULL, loss = NULL, input_shapes = NULL,
                         timeout = 300, ...,
                         levers = list(accumulation_steps = 1)) {
  check_dots_none(call = call)
  step <- cost_step_args(optimizer, loss, input_shapes, timeout, call)
  timeout <- step$timeout
  results <- with_plan_model(model, function(m) {
    shim_call("compare.layout_costs", model = m,
              distributions = unname(layouts), batch_size = batch_size,
              optimizer = step$optimizer, loss = step$loss,
              input_shapes = step$input_shapes, timeout = timeout,
              spent = elapsed_seconds() - started, remat = levers$remat,
              accumulation_steps = levers$accumulation_steps, call = call)
  }, deadline = started + timeout, timeout = timeout, arg = "model",
  call = call)
  costs <- Map(function(result, name, i) {
    withCallingHandlers(
      signal_from_python(result, call),
      kerasmesh_error = function(e) {
        classes <- grep("^kerasmesh_error_", class(e), value = TRUE)
        kerasmesh_abort(
          "Can't cost layout {.val {name}} ({i} of {length(layouts)}).",
          kind = sub("^kerasmesh_error_", "", classes), parent = e,
          layout = name, call = call
        )
      }
    )
    new_layout_cost(result$value)
  }, results, names(layouts)[seq_along(results)], seq_along(results))
  stats::setNames(costs, names(layouts))
}

# The step's arguments of layout_cost(), compare_layouts(), search_layout(),
# checked; then Python starts (on the first call), inside the caller's time.
cost_step_args <- function(optimizer, loss, input_shapes, timeout, call) {
  step <- list(
    optimizer = plan_optimizer_arg(optimizer, call = call),
    loss = cost_loss_arg(loss, call = call),
    input_shapes = cost_input_shapes_arg(input_shapes, call = call),
    timeout = check_number(timeout, "a positive number of seconds",
                           min = 0, exclusive_min = TRUE, call = call)
  )
  wait_for_compiles_at_exit()
  shim(call)
  step
}

# Seconds since some fixed point, for deadlines.
elapsed_seconds <- function() {
  proc.time()[["elapsed"]]
}

# `...` of `env` must be empty: rlang's error, which names what was
# passed, with kerasmesh's classes added.
check_dots_none <- function(env = rlang::caller_env(),
                            call = rlang::caller_env()) {
  tryCatch(
    rlang::check_dots_empty(env = env, call = call),
    rlib_error_dots_nonempty = function(e) {
      class(e) <- c(error_classes(kinds$argument), class(e))
      stop(e)
    }
  )
}

# A compile left running by a timeout must end before the process exits:
# exiting while XLA compiles aborts in its C++ code.
wait_for_compiles_at_exit <- function() {
  if (is.null(the$compile_waiter)) {
    the$compile_waiter <- new.env()
    reg.finalizer(the$compile_waiter, function(e) {
      if (python_started()) {
        try(shim_call("cost.wait_for_compiles"), silent = TRUE)
      }
    }, onexit = TRUE)
  }
  invisible()
}
