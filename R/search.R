#' Find the fastest configuration that fits
#'
#' Searches how to train `model` on `mesh`: the layout map, what each
#' block recomputes (`remat`) and how many micro-batches make the global
#' batch (`accumulation_steps`) and, given a [device_topology()], the mesh
#' itself, its shape and its device order. It returns the configuration
#' with the least modeled time per global batch (or the least traffic)
#' that fits `memory` per device, verified by one XLA compile of the full
#' model (see [layout_cost()]), and prints the R code that costs it again.
#'
#' @section The machine:
#' With a [device_topology()] as `mesh`, the search chooses the mesh:
#' every shape of two axes, `"data"` (the batch axis) and `"model"`, whose
#' sizes multiply to the topology's devices (and whose data axis divides
#' `batch_size`), and for each its device order: which axis varies fastest
#' over the device ids, so which axis's device groups stay inside a node
#' and which cross nodes. The order costs no compile: XLA's collectives
#' number devices by mesh position, so the search models the time of both
#' orders from one compile. `objective` is then `"time"`: the modeled
#' seconds per global batch on the topology (see [layout_cost()]'s
#' section "Time on a machine"), and `memory` defaults to the topology's.
#' The topology must have as many devices as JAX has (see
#' [simulate_devices()]): otherwise an error of class
#' `kerasmesh_error_topology_devices`. With a [device_mesh()], its shape
#' and order stay as given.
#'
#' @section Levers:
#' Rematerialization and micro-batches make a large model fit, at a price
#' in time: recomputed operations, and collectives paid once per
#' micro-batch. The search takes the fewest that fit: for each `remat`
#' choice in the order `"none"`, `"save_matmuls"`, `"full"`, the fewest
#' micro-batches that fit (predicted from a compile at fewer: activations
#' shrink with the micro-batch), a later choice tried only with fewer
#' micro-batches than an earlier one needed; the objective decides among
#' them. Where `"full"` fits at micro-batches that `"save_matmuls"` does
#' not, a blend is tried too: `"full"` on the first blocks, as few as the
#' memory between the two (taken as linear in those blocks) says,
#' `"save_matmuls"` on the rest. A blend is not compiled at reduced depth
#' (its figures lie between its choices'), and only its full-depth compile
#' decides that it fits. Where `"save_matmuls"` fits the full model with
#' room to spare and `"none"` is allowed, `"none"` goes on as many of the
#' last blocks as the room takes (fewer operations recomputed, and the
#' weights gathered once less for those blocks). `accumulation_steps`
#' keeps `batch_size` the global batch; each micro-batch must split evenly
#' over the data axis.
#' Remat needs blocks (see [set_remat()]): on a model without any the
#' search keeps `"none"`, and asking for another choice is an error of
#' class `kerasmesh_error_remat_blocks`. Weights and optimizer state sharded
#' over the data axis too (as FSDP or ZeRO-3 do) are layouts like others.
#'
#' @section How the search runs:
#' Variables are grouped into classes as [layout_plan()] lists them: one
#' class per path with its block numbers abstracted (every block's query
#' kernel is one class), so the result has at most one rule per class.
#' Each dimension is unsplit or on one mesh axis (Keras allows one axis
#' per dimension), each axis at most once per variable, and only where
#' the axis divides the dimension. Classes that end up with the same axes
#' share one rule where one regular expression matches exactly their
#' variables (the fewest rules), and unsplit classes get none. Rules in
#' `fixed` are never changed. On a model with blocks (see [set_remat()])
#' and a batch axis of more than one device, every layout also has one
#' rule for the blocks' outputs (such as `"transformer_layer_\\d+/output"
#' = c("data", NA, NA)`): each block's output split over the batch axis,
#' as data parallelism has it. Without it, XLA can split activations over
#' the batch axis on another dimension where weights are split over that
#' axis too, and all-reduce them in every block (a Llama-3-70B-sized
#' model on 4 x 8 devices, weights split over both axes: 387 GB per
#' device per step over the batch axis, 5 MB with the rule). Rules of
#' `fixed` for those outputs stand instead.
#'
#' In three rounds: (1) on every mesh, the layouts a person writes first
#' (data parallel, `start`, tensor parallel over the model axis, weights
#' fully sharded over the data axis, and the last two together) at the
#' cheapest levers; (2) for the best of the three best meshes, the levers
#' (above); (3) from the best so far, a walk over that mesh's layouts at
#' its levers: each step takes the first move that improves, among *tied*
#' moves (every dimension of one size, in every class, onto one axis or
#' unsplit: all heads, all MLP columns or the vocabulary at once) and
#' single-class moves, until none improves or the time is up. A space of
#' at most 64 layouts is costed whole instead, and at the cheapest levers
#' first. A candidate whose weights and optimizer state alone exceed
#' `memory` on a device is not compiled.
#'
#' @section How candidates are costed:
#' Every candidate is compiled by XLA (shape-only, as [layout_cost()]
#' does), with XLA's code generation cut short: its sharding, partitioning
#' and buffer passes, which give the memory and the collectives, run as
#' always, in about half the time. With `blocks`, `model` builds any
#' depth; candidates are compiled at 1 and 2 blocks and every figure is
#' extrapolated linearly to `blocks`
#' (`f(L) = f(1) + (L - 1) (f(2) - f(1))`). The best candidates are then
#' compiled again, at full depth (quick too: XLA's memory and collectives
#' are those of its default options), on the mesh in the chosen device
#' order, with the levers and the topology: only that
#' figure decides whether a configuration fits `memory` (when the best
#' one misses it, the same layout and micro-batches recomputing more are
#' compiled next), so the result
#' never fits by an estimate, and `predicted` beside `cost` shows how far
#' the search's own figure was off. A layout whose compile shows XLA
#' resharding tensors by replicating them (the cost's `reshardings`)
#' counts 10% slower, and the print-out says so.
#'
#' @section Objectives:
#' `"time"` on a topology is the modeled seconds per global batch. On a
#' mesh, `"time"` is an estimate in seconds per global batch: each
#' collective's bytes divided by the slowest `bandwidth` of the mesh axes
#' it runs over, plus XLA's count of floating-point operations per device
#' divided by `flop_rate`, once per micro-batch. `"traffic"` is the bytes
#' of all collectives per device per global batch.
#'
#' @section When nothing fits, and long searches:
#' When no configuration fits, the error (class
#' `kerasmesh_error_search_no_fit`) names the smallest memory reached and
#' the mesh, levers and rules that reached it. A progress bar shows how
#' many candidates were costed and the best so far when a search takes
#' more than 2 seconds. `timeout` stops the search (at 85% of it, or 75%
#' with `blocks`, leaving the rest for the full compiles; runners-up are
#' verified only while time is left) and returns the best configuration
#' found by then, saying so. When the time runs out before XLA compiles
#' the best one at full depth, it is returned with the search's own
#' figures (its quick compile, or, with `blocks`, the extrapolation and no
#' `cost`) and `verified` `FALSE`: its fit then rests on those figures
#' alone. An interrupt (Ctrl-C) stops it and leaves the session usable.
#'
#' @inheritParams layout_cost
#' @param model A function of no arguments that builds the model (built
#'   shape-only, as [layout_plan()] does), or a built model. With
#'   `blocks`, a function of one argument, the number of blocks
#'   (transformer layers) to build.
#' @param mesh A [device_mesh()] (its shape and device order stay), or a
#'   [device_topology()]: the search chooses the mesh (see below).
#' @param memory The memory budget of one device: bytes, or a string such
#'   as `"80GB"`; `NULL` for the topology's memory, or, on a mesh, the
#'   smallest device memory JAX reports (on GPUs and TPUs; none on CPUs);
#'   `Inf` for none.
#' @param start A layout to improve on: a [layout_map()], a Keras
#'   `LayoutMap` (such as a keras-hub backbone's `get_layout_map()`) or a
#'   distribution, on `mesh` (on a topology, on a mesh of axes `"data"`
#'   and `"model"`: its rules are tried on every mesh).
#' @param fixed A [layout_map()] of rules the search never changes, on
#'   `mesh` (on a topology, as for `start`).
#' @param objective `"time"` or `"traffic"` (see below); `NULL` for
#'   `"time"` on a topology and `"traffic"` on a mesh.
#' @param remat The rematerialization choices to search among (see
#'   [set_remat()]): `NULL` for all that the model's blocks allow, or some
#'   of `"none"`, `"save_matmuls"` and `"full"`. With both of the last
#'   two, where `"full"` fits at fewer micro-batches than `"save_matmuls"`
#'   does, the search also tries `"full"` on the fewest first blocks that
#'   make those fit, `"save_matmuls"` on the rest; with `"none"` and
#'   `"save_matmuls"`, `"none"` on the last blocks where memory is left:
#'   the result's `remat` is then one choice per block.
#' @param accumulation_steps The micro-batch counts to search among:
#'   `NULL` for every divisor of `batch_size` whose micro-batch the data
#'   axis splits, or whole numbers that divide `batch_size`.
#' @param blocks The model's number of blocks, when `model` builds any: a
#'   whole number from 1 to 65,536.
#' @param bandwidth For `objective = "time"` on a mesh: bytes per second
#'   over each mesh axis, a vector named by axis.
#' @param flop_rate For `objective = "time"` on a mesh: floating-point
#'   operations per second of one device.
#' @param batch_dim_name The mesh axis that splits the batch; by default
#'   the mesh's first axis (`"data"` on a topology).
#' @param timeout Seconds the whole search may take, from the call. The
#'   default, 600, is [layout_cost()]'s 300 doubled: a search runs many
#'   compiles, and stops at the deadline with the best layout found by
#'   then rather than failing.
#' @param verbose Whether to say which layouts were compiled.
#' @return A `kerasmesh_layout_search`: a list with `layout_map` (the
#'   chosen [layout_map()]), `mesh` (the [device_mesh()] it is on, in the
#'   chosen device order), `device_order` (`"model"` or `"data"`: the axis
#'   that varies fastest over device ids, on a topology; else `NULL`),
#'   `distribution` (the [model_parallel()] to train with), `remat`,
#'   `accumulation_steps`, `micro_batch_size`, `time` (the verified
#'   cost's modeled time: `compute`, `recompute`, `communication` by mesh
#'   axes and `total`, seconds per global batch; `NULL` without a
#'   topology), `memory` (its memory per device, by part), `cost` (its
#'   [layout_cost()], verified unless `verified` is `FALSE`), `topology`,
#'   `predicted` (the search's figures for it), `runners_up`,
#'   `data_parallel` and `start` (figures: `memory`, `traffic`, by axes,
#'   `flops`), `classes` (per class: the chosen axes and what the other
#'   placements cost), `candidates` (a data frame: every candidate costed,
#'   with its mesh and levers), `meshes` (a data frame: each mesh
#'   searched and its best candidate), `compiles`, `pruned` (candidates
#'   not compiled: their weights and optimizer state alone break
#'   `memory`), `space_size`, `method`, `stopped` and `seconds`.
#'   `format()` shows the R code that costs the found configuration again
#'   with [layout_cost()], `as_layout_map()` gives the layout map, and
#'   `plot()` draws every candidate costed, memory against traffic, with
#'   the budget and the found, start and data-parallel layouts marked.
#' @seealso [compare_layouts()] to cost configurations of your own.
#' @export
#' @examplesIf keras_available()
#' simulate_devices(8)
#' mesh <- device_mesh(c(data = 2, model = 4))
#' library(reticulate, include.only = "import")
#' keras <- import("keras")
#' build <- function() {
#'   keras$Sequential(list(
#'     keras$Input(shape = list(32L)),
#'     keras$layers$Dense(64L, name = "dense")
#'   ), name = "net")
#' }
#' # The bias pinned unsplit: 7 layouts of the kernel, all costed.
#' found <- search_layout(build, mesh, batch_size = 16, loss = "mse",
#'                        fixed = layout_map(mesh, "net/dense/bias" = NA))
#' found
#' summary(found)
#' plot(found)
#' as_layout_map(found)
#'
#' # On two nodes of four GPUs, the search chooses the mesh too.
#' topo <- device_topology("h100-sxm-80gb", nodes = 2, devices_per_node = 4)
#' found <- search_layout(build, topo, batch_size = 16, loss = "mse",
#'                        timeout = 60)
#' found$mesh
#' found$time$total
search_layout <- function(model, mesh, batch_size, optimizer = NULL,
                          loss = NULL, input_shapes = NULL, memory = NULL,
                          start = NULL, fixed = NULL, objective = NULL, ...,
                          remat = NULL, accumulation_steps = NULL,
                          blocks = NULL, bandwidth = NULL, flop_rate = NULL,
                          batch_dim_name = NULL, timeout = 600,
                          verbose = FALSE) {
  check_dots_none()
  call <- rlang::current_env()
  started <- elapsed_seconds()
  model_name <- search_model_name(substitute(model))
  check_plan_model(model, arg = "model", call = call)
  where <- check_search_mesh(mesh, call = call)
  batch_size <- check_whole(batch_size)
  objective <- check_search_objective(objective, where$topology, call = call)
  memory <- check_search_memory(memory, call = call)
  blocks <- check_blocks(blocks, model, call = call)
  start <- check_start(start, call = call)
  if (!is.null(fixed)) fixed <- .subset2(as_layout_map(fixed), "py")
  levers <- check_search_levers(remat, accumulation_steps, batch_size, call)
  bandwidth <- check_bandwidth(bandwidth, call = call)
  flop_rate <- check_number(flop_rate, "a positive number of FLOPs per second",
                            min = 0, exclusive_min = TRUE, allow_null = TRUE)
  check_search_time_figures(bandwidth, flop_rate, objective, where$topology,
                            call = call)
  batch_dim_name <- check_search_batch_dim(batch_dim_name, where$topology,
                                           call = call)
  check_flag(verbose)
  step <- check_step_settings(optimizer, loss, input_shapes, timeout, call)
  timeout <- step$timeout
  bar <- search_progress(verbose, started)
  desc <- with_plan_model(model, function(m) {
    shim_call(
      "search.search_layout", model = m, mesh = where$mesh,
      batch_size = batch_size, optimizer = step$optimizer, loss = step$loss,
      input_shapes = step$input_shapes, memory = memory, start = start,
      fixed = fixed, objective = objective, bandwidth = bandwidth,
      flop_rate = flop_rate, blocks = blocks,
      batch_dim_name = batch_dim_name, timeout = timeout,
      spent = elapsed_seconds() - started, progress = bar,
      remat = levers$remat, accumulation_steps = levers$accumulation_steps,
      topology = check_topology(where$topology, call = call), call = call
    )
  }, deadline = started + timeout, timeout = timeout, arg = "model",
  call = call)
  new_layout_search(desc, where$topology, list(
    model = model_name, batch_size = batch_size, optimizer = optimizer,
    loss = loss, input_shapes = input_shapes, blocks = blocks
  ))
}

# The object search_layout() returns, from the shim's description: the
# found mesh (in its device order), the distribution to train with, the
# levers, and the verified cost's time and memory. `call` keeps what the
# printed code needs to reproduce the cost.
new_layout_search <- function(desc, topology = NULL, call = list()) {
  mesh <- new_device_mesh(desc$mesh)
  lm <- new_layout_map(desc$layout_map)
  desc$candidates <- search_candidates(desc$candidates)
  desc$meshes <- search_meshes(desc$meshes)
  if (!is.null(desc$cost)) desc$cost <- new_layout_cost(desc$cost, topology)
  desc$mesh <- NULL
  desc$remat <- as_remat(desc$remat)
  desc$accumulation_steps <- as.integer(desc$accumulation_steps %||% 1L)
  desc$micro_batch_size <- as.integer(desc$micro_batch_size %||% NA)
  structure(
    c(list(layout_map = lm, mesh = mesh,
           distribution = model_parallel(lm, batch_dim_name =
                                           desc$batch_dim_name %||% NULL),
           time = desc$cost$time, memory = desc$cost$memory,
           topology = topology, call = call),
      desc),
    class = "kerasmesh_layout_search"
  )
}

search_candidates <- function(candidates) {
  column <- function(name, type, default) {
    vapply(candidates, function(c) {
      v <- c[[name]]
      if (is.null(v)) default else v
    }, type)
  }
  data.frame(
    memory = column("memory", 1, NA_real_),
    traffic = column("traffic", 1, NA_real_),
    value = column("value", 1, NA_real_),
    rules = as.integer(column("rules", 1, NA_real_)),
    seconds = column("seconds", 1, NA_real_),
    mesh = column("mesh", "", NA_character_),
    remat = column("remat", "", "none"),
    accumulation_steps = as.integer(column("accumulation_steps", 1, 1)),
    reshardings = as.integer(column("reshardings", 1, 0)),
    stringsAsFactors = FALSE
  )
}

search_meshes <- function(meshes) {
  num <- function(v) if (is.null(v)) NA_real_ else as.numeric(v)
  data.frame(
    mesh = vapply(meshes, function(m) m$mesh, ""),
    data = vapply(meshes, function(m) as.integer(m$shape[[1]]), 1L),
    model = vapply(meshes, function(m) as.integer(m$shape[[2]]), 1L),
    orders = vapply(meshes, function(m) {
      paste(unlist(m$orders), collapse = ", ")
    }, ""),
    costed = vapply(meshes, function(m) as.integer(m$costed), 1L),
    pruned = vapply(meshes, function(m) as.integer(m$pruned), 1L),
    fits = vapply(meshes, function(m) isTRUE(m$fits), TRUE),
    memory = vapply(meshes, function(m) num(m$memory), 1),
    value = vapply(meshes, function(m) num(m$value), 1),
    stringsAsFactors = FALSE
  )
}

# A Python-callable progress reporter: a cli progress bar (shown after 2 s),
# and with `verbose` a line per layout costed.
search_progress <- function(verbose, started, env = parent.frame()) {
  id <- cli::cli_progress_bar(
    "Searching layouts", total = NA, .envir = env,
    format = "{cli::pb_spin} Searching layouts: {cli::pb_current} costed"
  )
  function(n, best = NULL, memory = NULL, traffic = NULL) {
    if (isTRUE(verbose) && !is.null(memory)) {
      cli::cli_inform(c(i = sprintf(
        "Layout %d: %s per device, %s of traffic (%.0f s).", as.integer(n),
        bytes_text(memory), bytes_text(traffic),
        elapsed_seconds() - started
      )))
    }
    cli::cli_progress_update(id = id, set = as.integer(n), .envir = env)
    invisible()
  }
}
