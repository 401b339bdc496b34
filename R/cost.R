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
#' what the block did not keep: the memory of the activations drops and
#' the step does more operations. `recompute_flops` is the part of `flops`
#' spent recomputing: the step is traced once more without remat, XLA
#' counts the operations of both unoptimized programs, and the share their
#' difference makes of the count with remat is applied to the compiled
#' step's own `flops` (per device, after XLA split the step over the mesh).
#'
#' With `accumulation_steps` k, the compiled step takes a micro-batch of
#' `batch_size / k` samples, and its optimizer is the given one with Keras's
#' `gradient_accumulation_steps = k` (replacing the optimizer's own
#' setting; `NULL`, the default, keeps the optimizer as it is, and
#' `batch_size` is one step's batch): it sums k steps' gradients in
#' accumulators, one per trainable variable and laid out as that variable,
#' counted in `optimizer`, and updates the weights every k-th step. The
#' micro-batch must split evenly over the batch axis. `inputs`,
#' `activations`, `flops` and the collectives are those of one micro-step;
#' a global batch runs k of them. The plan in `plan` is of the micro-step
#' too: `layout_plan(batch_size = batch_size / k)` gives the same batch,
#' without the accumulators. A plan does not depend on `remat`: its layer
#' outputs are what each layer returns, not what the backward pass keeps.
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
#'   `"save_matmuls"` or `"full"`, or one per block (a search's `remat`),
#'   applied to the model's blocks for this step only; `NULL` for the
#'   model as it is (the choice [set_remat()] applied to it, else `"none"`).
#' @param accumulation_steps Micro-batches per optimizer update (Keras's
#'   `gradient_accumulation_steps`): a whole number that divides
#'   `batch_size`, which stays the global batch (see below); `NULL` for
#'   the optimizer as it is.
#' @param ... Must be empty.
#' @param timeout Seconds the whole call may take (see below). The
#'   default, 300, is sized for one compile of a large model: a
#'   Llama-3-8B-shaped step at full depth compiles in under a minute on a
#'   laptop, so 300 leaves room for a slow machine without letting a stuck
#'   call run on.
#' @return A `kerasmesh_layout_cost` object, a list with
#'   * `memory`: bytes per device, named `weights`, `optimizer`, `inputs`
#'     (the device's part of the batch and targets), `activations`
#'     (gradients and activations: XLA's temporaries), `outputs` (what the
#'     step returns beyond the updated state, which reuses the donated
#'     buffers) and `total`;
#'   * `xla`: XLA's own figures per device, `argument`, `output`, `alias`
#'     (outputs that reuse argument buffers), `temp`, `generated_code` and
#'     `total` (argument + output - alias + temp);
#'   * `collectives`: a data frame, one row per collective and set of mesh
#'     axes, with `collective` (such as `"all-reduce"`), `axes` (joined
#'     with `"+"`), `count` and `bytes` per device per step (the size of
#'     each collective's result, and for a reduce-scatter, of the array it
#'     reduces);
#'   * `traffic`: bytes per device per step by mesh axis;
#'   * `ops`: every collective: `collective`, `axes`, `shapes`, `bytes`,
#'     `groups`;
#'   * `attribution`: traffic per variable ([summary.kerasmesh_layout_cost()]);
#'   * `plan`: the planner's totals (see [layout_plan()]); `mesh`;
#'     `distribution`; `batch_size`; `batch_dim_name`; `loss`; `inputs`;
#'     `compile_seconds`; `versions` (Keras, JAX, jaxlib, XLA backend);
#'     `warnings` (the plan's warnings: see [check_layout()]);
#'   * `compiled_for`: what compiled the step (see below): `label` (such
#'     as `"H100 SXM 80GB (XLA GPU, deviceless)"` or `"CPU (XLA CPU)"`),
#'     `kind`, `preset`, `nearest` (a preset standing in for hardware of
#'     your own), `compiler_missing` (a GPU topology compiled by the CPU
#'     compiler because XLA's GPU compiler is not installed);
#'   * `remat` (the choice in effect), `accumulation_steps`,
#'     `micro_batch_size` (samples per compiled step), `flops` (the
#'     floating-point operations per device per compiled step, counted from
#'     the compiled program as XLA's cost analysis counts them, every trip
#'     of a loop, and cuBLAS's and cuDNN's calls from their shapes) and
#'     `recompute_flops` (the part of them spent recomputing; 0 without
#'     remat).
#' @seealso [compare_layouts()] for several layouts side by side;
#'   [layout_plan()] for the variables alone.
#' @export
#' @order 1
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
#' print(cost, memory = "16GB")
#' plot(cost)
layout_cost <- function(model, distribution, batch_size, optimizer = NULL,
                        loss = NULL, input_shapes = NULL, remat = NULL,
                        accumulation_steps = NULL, ..., topology = NULL,
                        timeout = 300) {
  check_call()
  cost_layout(model, distribution, batch_size, optimizer, loss, input_shapes,
              timeout = timeout, started = elapsed_seconds(),
              call = rlang::current_env(), remat = remat,
              accumulation_steps = accumulation_steps, topology = topology)
}

# layout_cost() for a call that started at `started` (elapsed_seconds()):
# `timeout` counts from then, through building, tracing and compiling.
cost_layout <- function(model, distribution, batch_size, optimizer = NULL,
                        loss = NULL, input_shapes = NULL, timeout = 300,
                        started = elapsed_seconds(),
                        call = rlang::caller_env(), remat = NULL,
                        accumulation_steps = NULL, topology = NULL) {
  check_plan_model(model, arg = "model", call = call)
  distribution <- check_distribution(distribution, allow_null = FALSE,
                                     call = call)
  batch_size <- check_whole(batch_size, call = call)
  machine <- check_topology(topology, call = call)
  levers <- check_cost_levers(remat, accumulation_steps, batch_size, call)
  step <- check_step_settings(optimizer, loss, input_shapes, timeout, call)
  timeout <- step$timeout
  cost_of <- function(model) {
    shim_call(
      "cost.layout_cost", model = model, distribution = distribution,
      batch_size = batch_size, optimizer = step$optimizer, loss = step$loss,
      input_shapes = step$input_shapes, timeout = timeout,
      spent = elapsed_seconds() - started, remat = levers$remat,
      accumulation_steps = levers$accumulation_steps, topology = machine,
      call = call
    )
  }
  cost <- new_layout_cost(with_plan_model(
    model, cost_of, deadline = started + timeout, timeout = timeout,
    arg = "model", call = call
  ), topology)
  inform_gpu_compiler(cost$compiled_for)
  cost
}

# -- the cost object -------------------------------------------------------

new_layout_cost <- function(desc, topology = NULL) {
  num <- function(x) vapply(x, function(v) as.numeric(v), 1)
  collectives <- cost_collectives(desc$collectives)
  summary <- desc$plan
  summary$unmatched <- as.character(unlist(summary$unmatched))
  summary$dtypes <- as.character(unlist(summary$dtypes))
  stamp_fields(structure(
    list(
      memory = num(desc$memory),
      xla = num(desc$xla),
      need = as.numeric(desc$need),
      collectives = collectives,
      traffic = traffic_by_axis(collectives),
      ops = cost_ops(desc$ops),
      attribution = new_cost_attribution(desc$attribution),
      plan = summary,
      mesh = new_device_mesh(desc$mesh),
      distribution = desc$distribution,
      batch_size = as.integer(desc$batch_size),
      batch_dim_name = desc$batch_dim_name,
      loss = desc$loss,
      inputs = data.frame(
        name = as.character(unlist(desc$inputs$name)),
        shape = I(lapply(desc$inputs$shape, whole_numbers)),
        dtype = as.character(unlist(desc$inputs$dtype)),
        stringsAsFactors = FALSE
      ),
      compile_seconds = desc$compile_seconds,
      versions = desc$versions,
      warnings = as.character(unlist(desc$warnings)),
      compute_dtype = desc$compute_dtype %||% NA_character_,
      bfloat16 = desc$bfloat16 %||% NA_character_,
      attention = desc$attention %||% NA_character_,
      reshardings = new_cost_reshardings(desc$reshardings),
      xla_log = as.character(unlist(desc$xla_log)),
      time = new_cost_time(desc$time),
      compiled_for = new_compiled_for(desc$compiled_for),
      topology = topology,
      remat = as_remat(desc$remat),
      accumulation_steps = as.integer(desc$accumulation_steps %||% 1L),
      micro_batch_size = as.integer(desc$micro_batch_size %||%
                                      desc$batch_size),
      flops = as.numeric(desc$flops %||% NA_real_),
      recompute_flops = as.numeric(desc$recompute_flops %||% 0)
    ),
    class = "kerasmesh_layout_cost"
  ))
}

# A cost as new_layout_cost() makes it: one edited by hand
# (`cost$memory <- NULL`) is refused where it prints, naming the field.
check_cost_object <- function(x, prefix = "x", call = rlang::caller_env()) {
  named <- list(
    memory = c("weights", "optimizer", "inputs", "activations", "outputs",
               "total"),
    xla = c("argument", "temp", "output", "alias", "total")
  )
  ok <- c(
    vapply(names(named), function(field) {
      v <- x[[field]]
      is.numeric(v) && all(named[[field]] %in% names(v))
    }, TRUE),
    need = is.numeric(x$need) && length(x$need) == 1,
    plan = is.list(x$plan) && !is.null(x$plan$model),
    mesh = inherits(x$mesh, "kerasmesh_device_mesh"),
    collectives = is.data.frame(x$collectives),
    batch_size = is.numeric(x$batch_size) && length(x$batch_size) == 1 &&
      !is.na(x$batch_size) && x$batch_size == round(x$batch_size),
    compile_seconds = is.numeric(x$compile_seconds) &&
      length(x$compile_seconds) == 1,
    topology = is.null(x$topology) ||
      inherits(x$topology, "kerasmesh_device_topology"),
    time = cost_time_ok(x$time),
    attribution = is.null(x$attribution) ||
      (is.list(x$attribution) &&
         is.data.frame(x$attribution$variables) &&
         is.data.frame(x$attribution$layers))
  )
  named_bytes <- function(field) {
    paste("bytes named", paste(named[[field]], collapse = ", "))
  }
  check_fields(
    x, ok, c(memory = named_bytes("memory"), xla = named_bytes("xla"),
             default = "what {.fn layout_cost} returns"),
    way_out = "Cost the layout again with {.fn layout_cost}.",
    prefix = prefix, call = call
  )
  check_topology(x$topology, call = call)
  invisible(x)
}

# A cost's time as new_cost_time() makes it (NULL without a topology).
cost_time_ok <- function(time) {
  one_number <- function(v) is.numeric(v) && length(v) == 1 && !is.na(v)
  is.null(time) || (
    is.list(time) &&
      all(vapply(time[c("compute", "recompute", "total", "flop_rate")],
                 one_number, TRUE)) &&
      is.numeric(time$parts) &&
      all(c("matmul", "attention", "memory") %in% names(time$parts)) &&
      is.data.frame(time$communication) &&
      all(c("axes", "exposed", "hidden") %in% names(time$communication)) &&
      is.character(time$compute_dtype) && length(time$compute_dtype) == 1
  )
}

# The cost's collectives by collective and axes, and every one of them, as
# data frames.
cost_collectives <- function(columns) {
  data.frame(collective = as.character(unlist(columns$collective)),
             axes = as.character(unlist(columns$axes)),
             count = as.integer(unlist(columns$count)),
             bytes = as.numeric(unlist(columns$bytes)),
             stringsAsFactors = FALSE)
}

cost_ops <- function(ops) {
  ops_df <- data.frame(
    collective = vapply(ops, function(o) o$collective, ""),
    axes = vapply(ops, function(o) paste(unlist(o$axes), collapse = "+"), ""),
    bytes = vapply(ops, function(o) as.numeric(o$bytes), 1),
    stringsAsFactors = FALSE
  )
  ops_df$shapes <- lapply(ops, function(o) lapply(o$shapes, whole_numbers))
  ops_df$groups <- lapply(ops, function(o) lapply(o$groups, as.integer))
  ops_df
}

# Bytes per device per step by mesh axis ("" for none), largest first.
traffic_by_axis <- function(collectives) {
  if (nrow(collectives) == 0) {
    return(stats::setNames(numeric(), character()))
  }
  by_axis <- tapply(collectives$bytes, collectives$axes, sum)
  sort(stats::setNames(as.numeric(by_axis), names(by_axis)),
       decreasing = TRUE)
}
