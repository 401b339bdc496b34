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
#' micro-batch. The search weighs them with the layout: every `remat`
#' choice allowed, and between two neighbouring choices the blend with
#' the fewest blocks of the heavier one that fits (the heavier choice on
#' the first blocks: the result's `remat` is then one choice per block),
#' and every micro-batch count allowed whose micro-batch the data axis
#' splits; `accumulation_steps` keeps `batch_size` the global batch.
#' Remat needs blocks (see [set_remat()]): on a model without any the
#' search keeps `"none"`, and asking for another choice is an error of
#' class `kerasmesh_error_remat_blocks`.
#'
#' @section How the search works:
#' In three steps, each deterministic, so that the same call gives the
#' same configuration on any machine and under any load: *profile* (a
#' fixed set of small XLA compiles: each layout family on each mesh, at
#' one and two blocks with `blocks`, per remat choice), *solve* (every
#' configuration, mesh x device order x layout x remat x micro-batches,
#' predicted from the profile and ranked by its modeled time, or traffic,
#' among those that fit) and *verify* (the best compiled at full depth,
#' as [layout_cost()] costs it: only XLA's figure decides that it fits; a
#' miss corrects the figures it was predicted from, and the solve runs
#' again). The algorithm, with every rule and constant it uses, is stated
#' once, in the docstring of the package's Python module
#' `kerasmesh/search/pipeline.py` (under
#' `system.file("python", package = "kerasmesh")`).
#'
#' Layouts: where a mesh's space of layouts is small (each variable
#' class's dimensions unsplit or on one mesh axis), every one;
#' otherwise the layouts people train with, data parallel, fully sharded
#' (FSDP/ZeRO-3), tensor parallel (Megatron's), both, and `start`. Classes
#' are as [layout_plan()] lists them (one per path, block numbers
#' abstracted), rules in `fixed` stand in every layout, and on a model
#' with blocks every layout keeps each block's output split over the batch
#' axis (see [layout_plan()]'s warnings). A layout whose weights and
#' optimizer state alone break `memory` is not compiled.
#'
#' The search keeps its compiles' figures on disk (see
#' [search_cache_dir()]): a repeated or slightly changed search compiles
#' only what it has not seen.
#'
#' @section Why it won:
#' The result's `why` names what binds the found configuration
#' (`"memory"` when a configuration predicted faster breaks the budget,
#' with that configuration as `faster`; else `"objective"`) and, for each
#' lever (mesh, device order, layout, remat, micro-batches), the best
#' configuration that differs from it in that lever alone, with its
#' modeled time (or traffic), memory and ratio to the found one's.
#'
#' @section Objectives:
#' `"time"` on a topology is the modeled seconds per global batch (see
#' [layout_cost()]'s section "Time on a machine"). On a mesh, `"time"` is
#' the same model on a machine of the mesh's devices: each collective at
#' the slowest `bandwidth` of the mesh axes it runs over, the operations
#' at `flop_rate`. `"traffic"` is the bytes of all collectives per device
#' per global batch.
#'
#' @section When nothing fits, and long searches:
#' When no configuration fits, the error (class
#' `kerasmesh_error_search_no_fit`) names the least memory reached and
#' the configuration that reached it. A progress bar shows how many
#' compiles were made when a search takes more than 2 seconds. `timeout`
#' bounds the search; it never changes the answer, only cuts it short:
#' when the profile runs out of its share of `timeout` (the rest is kept
#' for the full-depth compile), the result lists what it left out
#' (`unprofiled`) and says that it is partial; when the time runs out
#' before the full-depth compile, the best prediction is returned with
#' `verified` `FALSE` and no `cost`. An
#' interrupt (Ctrl-C) stops it and leaves the session usable.
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
#'   over each mesh axis, a vector (or list) named by axis, of numbers or
#'   strings such as `"450GB/s"` (a lowercase `b` counts bits), as
#'   [device_topology()] reads its links.
#' @param flop_rate For `objective = "time"` on a mesh: floating-point
#'   operations per second of one device.
#' @param batch_dim_name The mesh axis that splits the batch; by default
#'   the mesh's first axis (`"data"` on a topology).
#' @param timeout Seconds the whole search may take, from the call. The
#'   default, 600, is [layout_cost()]'s 300 doubled: a search runs many
#'   compiles, and stops at the deadline with the best configuration found
#'   by then (saying what it left out) rather than failing.
#' @param cache Where to keep the figures of the search's compiles: `TRUE`
#'   for [search_cache_dir()], `FALSE` for nowhere, or a directory.
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
#'   [layout_cost()] at full depth; `NULL` when not `verified`),
#'   `topology`, `predicted` (the search's figures for it: `memory`,
#'   `traffic`, by axes, `flops`, `value`), `why` (above),
#'   `data_parallel` and `start` (the same figures for those layouts),
#'   `classes` (per class: the chosen axes and what the other placements
#'   profiled cost), `candidates` (a data frame: every configuration
#'   predicted, the best first, with its mesh, device order, layout,
#'   levers, memory, traffic, objective `value` and whether it `fits`),
#'   `meshes` (a data frame: each mesh searched and its best
#'   configuration), `compiles` (XLA compiles made), `profiled` (profile
#'   figures used, compiled or read from the cache), `cache` (its
#'   directory, hits and misses, and a note when it could not be used),
#'   `pruned` (layouts not compiled: their weights and optimizer state
#'   alone break `memory`), `unprofiled` (a data frame: what the profile
#'   left out when the time ran out), `space_size`, `method`
#'   (`"exhaustive"` or `"families"`), `stopped` and `seconds`.
#'   `format()` shows the R code that costs the found configuration again
#'   with [layout_cost()], `as_layout_map()` gives the layout map, and
#'   `plot()` draws every configuration predicted, memory against
#'   traffic, with the budget and the found, start and data-parallel
#'   layouts marked.
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
                          cache = TRUE, verbose = FALSE) {
  check_call()
  call <- rlang::current_env()
  started <- elapsed_seconds()
  model_name <- search_model_name(substitute(model))
  blocks <- check_blocks(blocks, call = call)
  check_plan_model(model, blocks = !is.null(blocks), arg = "model",
                   call = call)
  where <- check_search_mesh(mesh, call = call)
  batch_size <- check_whole(batch_size)
  objective <- check_search_objective(objective, where$topology, call = call)
  memory <- check_search_memory(memory, call = call)
  start <- check_start(start, call = call)
  if (!is.null(fixed)) fixed <- object_py(as_layout_map(fixed), "fixed")
  levers <- check_search_levers(remat, accumulation_steps, batch_size, call)
  # Whether they may be given at all comes before what they must be.
  check_search_time_figures(bandwidth, flop_rate, objective, where$topology,
                            call = call)
  bandwidth <- check_bandwidth(bandwidth, call = call)
  flop_rate <- check_number(flop_rate, "a positive, finite number of FLOPs per
                            second", min = 0, exclusive_min = TRUE,
                            max = .Machine$double.xmax, allow_null = TRUE)
  batch_dim_name <- check_search_batch_dim(batch_dim_name, where$topology,
                                           call = call)
  check_flag(verbose)
  cache_dir <- check_search_cache(cache, call = call)
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
      topology = check_topology(where$topology, call = call),
      cache_dir = cache_dir, call = call
    )
  }, deadline = started + timeout, timeout = timeout, task = "search",
  blocks = !is.null(blocks), arg = "model", call = call)
  new_layout_search(desc, where$topology, list(
    model = model_name, batch_size = batch_size, optimizer = optimizer,
    loss = loss, input_shapes = input_shapes, blocks = blocks
  ))
}

# A Python-callable progress reporter: a cli progress bar (shown after 2 s),
# and with `verbose` a line per profile compile (or figures read from the
# cache): its memory and traffic.
search_progress <- function(verbose, started, env = parent.frame()) {
  id <- cli::cli_progress_bar(
    "Searching layouts", total = NA, .envir = env,
    format = "{cli::pb_spin} Searching layouts: {cli::pb_current} profiled"
  )
  function(n, memory = NULL, traffic = NULL) {
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
