#' Find the layout with the least traffic that fits
#'
#' Searches layout maps for `model` on `mesh` and returns the one whose
#' training step moves the fewest bytes between devices (or takes the least
#' estimated time) while fitting `memory` per device, with its cost
#' verified by one XLA compile of the full model (see [layout_cost()]).
#'
#' @section The search space:
#' Variables are grouped into classes as [layout_plan()] lists them: one
#' class per path with its block numbers abstracted (every block's query
#' kernel is one class), so the result has at most one rule per class.
#' Each dimension is unsplit or on one mesh axis (Keras allows one axis
#' per dimension), each axis at most once per variable, and only where the
#' axis divides the dimension. Classes that end up with the same axes
#' share one rule where one regular expression matches exactly their
#' variables (the fewest rules), and unsplit classes get none. Rules in
#' `fixed` are never changed.
#'
#' @section How candidates are costed:
#' Every candidate is compiled by XLA (shape-only, as [layout_cost()]
#' does), with XLA's code generation cut short: its sharding, partitioning
#' and buffer passes, which give the memory and the collectives, run as
#' always, in about half the time. A space of at most 64 layouts is costed
#' exhaustively. Larger ones
#' are walked from the best of data parallel, `start` and a tensor-parallel
#' start (every dimension size but the residual width, the size most
#' classes share, on the last non-batch axis): each step takes the first
#' move that improves, among *tied* moves (every dimension of one size, in
#' every class, onto one axis or unsplit: all heads, all MLP columns or the
#' vocabulary at once) and single-class moves, until none improves or the
#' time is up. While the layout fits, moves that split less are tried
#' first, the smallest first; while it does not, those that split more,
#' the largest first. Once a layout fits, a candidate whose weights alone
#' exceed `memory` on a device is not compiled (XLA's total counts every
#' weight; each compile checks that it does). With `blocks`, `model`
#' builds any depth; candidates
#' are compiled at 1 and 2 blocks and every figure is extrapolated
#' linearly to `blocks` (`f(L) = f(1) + (L - 1) (f(2) - f(1))`). The
#' best candidates are then compiled again, at full depth and with XLA's
#' default options: only that figure decides whether a layout fits
#' `memory`, so the result never fits by an estimate, and `predicted`
#' beside `cost` shows how far the search's own figure was off.
#'
#' @section Objectives:
#' `"traffic"` is the bytes of all collectives per device per step.
#' `"time"` is an estimate in seconds per step: each collective's bytes
#' divided by the slowest `bandwidth` of the mesh axes it runs over, plus
#' XLA's count of floating-point operations per device divided by
#' `flop_rate`.
#'
#' @section Long searches:
#' A progress bar shows how many layouts were costed and the best so far
#' when a search takes more than 2 seconds. `timeout` stops the search
#' (at 85% of it, or 75% with `blocks`, leaving the rest for the full
#' compiles; runners-up are verified only while time is left) and returns
#' the best layout found by then, saying so. When the time runs out before
#' XLA compiles the best layout at full depth, that layout is returned with
#' the search's own figures (its quick compile, or, with `blocks`, the
#' extrapolation and no `cost`) and `verified` `FALSE`: its fit then rests
#' on those figures alone. An interrupt (Ctrl-C) stops it and leaves the
#' session usable.
#'
#' @inheritParams layout_cost
#' @param model A function of no arguments that builds the model (built
#'   shape-only, as [layout_plan()] does), or a built model. With
#'   `blocks`, a function of one argument, the number of blocks
#'   (transformer layers) to build.
#' @param mesh A [device_mesh()].
#' @param memory The memory budget of one device: bytes, or a string such
#'   as `"80GB"`; `NULL` for the smallest device memory JAX reports (on
#'   GPUs and TPUs; none on CPUs), `Inf` for none.
#' @param start A layout to improve on: a [layout_map()], a Keras
#'   `LayoutMap` (such as a keras-hub backbone's `get_layout_map()`) or a
#'   distribution, on `mesh`.
#' @param fixed A [layout_map()] on `mesh` of rules the search never
#'   changes.
#' @param objective `"traffic"` or `"time"` (see below).
#' @param blocks The model's number of blocks, when `model` builds any.
#' @param bandwidth For `objective = "time"`: bytes per second over each
#'   mesh axis, a vector named by axis.
#' @param flop_rate For `objective = "time"`: floating-point operations
#'   per second of one device.
#' @param batch_dim_name The mesh axis that splits the batch; by default
#'   the mesh's first axis.
#' @param timeout Seconds the whole search may take, from the call. The
#'   default, 600, is [layout_cost()]'s 300 doubled: a search runs many
#'   compiles, and stops at the deadline with the best layout found by
#'   then rather than failing.
#' @param verbose Whether to say which layouts were compiled.
#' @return A `kerasmesh_layout_search`: a list with `layout_map` (the
#'   chosen [layout_map()]), `cost` (its [layout_cost()], verified
#'   unless `verified` is `FALSE`),
#'   `predicted` (the search's figures for it), `runners_up`,
#'   `data_parallel` and `start` (figures: `memory`, `traffic`, by axes,
#'   `flops`), `classes` (per class: the chosen axes and what the other
#'   placements cost), `candidates` (a data frame: every layout costed),
#'   `compiles`, `pruned` (candidates not compiled: their weights alone
#'   break `memory`), `space_size`, `method`, `stopped` and `seconds`.
#'   `as_layout_map()` gives the layout map, `format()` it as R code, and
#'   `plot()` draws every layout costed, memory against traffic, with the
#'   budget and the found, start and data-parallel layouts marked.
#' @seealso [compare_layouts()] to cost layouts of your own.
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
search_layout <- function(model, mesh, batch_size, optimizer = NULL,
                          loss = NULL, input_shapes = NULL, memory = NULL,
                          start = NULL, fixed = NULL,
                          objective = c("traffic", "time"), ...,
                          blocks = NULL, bandwidth = NULL, flop_rate = NULL,
                          batch_dim_name = NULL, timeout = 600,
                          verbose = FALSE) {
  check_dots_none()
  call <- rlang::current_env()
  started <- elapsed_seconds()
  check_plan_model(model, arg = "model", call = call)
  mesh <- as_device_mesh(mesh)
  batch_size <- check_whole(batch_size)
  objective <- check_choice(objective, c("traffic", "time"))
  memory <- check_search_memory(memory, call = call)
  blocks <- check_blocks(blocks, model, call = call)
  start <- check_start(start, call = call)
  if (!is.null(fixed)) fixed <- .subset2(as_layout_map(fixed), "py")
  bandwidth <- check_bandwidth(bandwidth, call = call)
  flop_rate <- check_number(flop_rate, "a positive number of FLOPs per second",
                            min = 0, exclusive_min = TRUE, allow_null = TRUE)
  if (!is.null(batch_dim_name)) check_string(batch_dim_name)
  check_flag(verbose)
  step <- cost_step_args(optimizer, loss, input_shapes, timeout, call)
  timeout <- step$timeout
  bar <- search_progress(verbose, started)
  desc <- with_plan_model(model, function(m) {
    shim_call(
      "search.search_layout", model = m, mesh = .subset2(mesh, "py"),
      batch_size = batch_size, optimizer = step$optimizer, loss = step$loss,
      input_shapes = step$input_shapes, memory = memory, start = start,
      fixed = fixed, objective = objective, bandwidth = bandwidth,
      flop_rate = flop_rate, blocks = blocks,
      batch_dim_name = batch_dim_name, timeout = timeout,
      spent = elapsed_seconds() - started, progress = bar, call = call
    )
  }, deadline = started + timeout, timeout = timeout, arg = "model",
  call = call)
  new_layout_search(desc, mesh)
}

# The object search_layout() returns, from the shim's description.
new_layout_search <- function(desc, mesh) {
  lm <- new_layout_map(desc$layout_map)
  candidates <- desc$candidates
  desc$candidates <- data.frame(
    memory = vapply(candidates, function(c) c$memory, 1),
    traffic = vapply(candidates, function(c) c$traffic, 1),
    value = vapply(candidates, function(c) c$value, 1),
    rules = vapply(candidates, function(c) as.integer(c$rules), 1L),
    seconds = vapply(candidates, function(c) c$seconds, 1)
  )
  if (!is.null(desc$cost)) desc$cost <- new_layout_cost(desc$cost)
  structure(c(list(layout_map = lm, mesh = mesh), desc),
            class = "kerasmesh_layout_search")
}

# -- arguments ----------------------------------------------------------------

check_search_memory <- function(x, call = rlang::caller_env()) {
  if (is.null(x)) {
    return("device")
  }
  memory <- check_bytes(x, allow_inf = TRUE, arg = "memory", call = call)
  if (is.infinite(memory)) NULL else as.numeric(memory)
}

check_bandwidth <- function(x, call = rlang::caller_env()) {
  if (is.null(x)) {
    return(NULL)
  }
  named <- !is.null(names(x)) && all(nzchar(names(x))) && !anyNA(names(x))
  if (!is.numeric(x) || !length(x) || anyNA(x) || any(x <= 0) || !named) {
    stop_input_type(x, "positive bytes per second, named by mesh axis",
                    way_out = "Such as {.code c(data = 50e9, model = 450e9)}.",
                    arg = "bandwidth", call = call)
  }
  as.list(x)
}

check_blocks <- function(blocks, model, call = rlang::caller_env()) {
  if (is.null(blocks)) {
    return(NULL)
  }
  blocks <- check_whole(blocks, call = call)
  if (!is.function(model) || length(formals(model)) < 1) {
    stop_input_type(
      model, show_value = FALSE,
      problem = "With {.arg blocks}, {.arg model} must be a function of one
                 argument, the number of blocks to build.",
      kind = kinds$model, call = call
    )
  }
  blocks
}

check_start <- function(x, call = rlang::caller_env()) {
  if (is.null(x)) {
    return(NULL)
  }
  if (inherits(x, "kerasmesh_layout_map")) {
    return(.subset2(x, "py"))
  }
  type <- object_type(x)
  if (type == "layout_map") {
    return(x)
  }
  if (inherits(x, "kerasmesh_distribution") || type == "distribution") {
    return(check_distribution(x, arg = "start", call = call))
  }
  stop_input_type(x, "a layout map or a distribution", show_value = FALSE,
                  way_out = "Give {.fn layout_map}, a Keras {.code LayoutMap}
                             or {.fn model_parallel}.",
                  kind = kinds$layout_map, arg = "start", call = call)
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
