# The arguments of search_layout(), checked in R before Python starts:
# where to search (a mesh or a topology), the objective, the levers.

# A mesh (the shape fixed) or a topology (the search chooses the mesh):
# list(mesh = the Keras mesh or NULL, topology = the topology or NULL).
check_search_mesh <- function(mesh, call = rlang::caller_env()) {
  if (inherits(mesh, "kerasmesh_device_topology")) {
    return(list(mesh = NULL, topology = mesh))
  }
  if (!inherits(mesh, "kerasmesh_device_mesh") &&
        !inherits(mesh, "python.builtin.object")) {
    stop_input_type(mesh, "a device mesh or a device topology",
                    show_value = FALSE, kind = kinds$device_mesh,
                    way_out = "Make one with {.fn device_mesh} or
                               {.fn device_topology}.",
                    arg = "mesh", call = call)
  }
  list(mesh = object_py(as_device_mesh(mesh), "mesh", call),
       topology = NULL)
}

# NULL: "time" on a topology, "traffic" on a mesh.
check_search_objective <- function(objective, topology,
                                   call = rlang::caller_env()) {
  if (is.null(objective)) {
    return(if (is.null(topology)) "traffic" else "time")
  }
  check_choice(objective, c("traffic", "time"), arg = "objective",
               call = call)
}

# The levers a search may use: `remat` NULL (every choice the model's
# blocks allow) or some of remat_choices; `accumulation_steps` NULL (every
# divisor of the batch) or whole numbers that divide `batch_size`.
check_search_levers <- function(remat, accumulation_steps, batch_size, call) {
  if (!is.null(remat)) {
    if (!is.character(remat) || !length(remat) || anyNA(remat)) {
      stop_input_type(remat, "`NULL` or some of {.or {.val {remat_choices}}}",
                      kind = kinds$remat, arg = "remat", call = call)
    }
    for (r in remat) check_remat(r, arg = "remat", call = call)
    remat <- as.list(unique(remat))
  }
  if (!is.null(accumulation_steps)) {
    if (!is.numeric(accumulation_steps) || !length(accumulation_steps)) {
      stop_input_type(accumulation_steps, "`NULL` or whole numbers",
                      kind = kinds$accumulation_steps,
                      arg = "accumulation_steps", call = call)
    }
    accumulation_steps <- as.list(vapply(
      accumulation_steps, function(k) {
        as.integer(check_accumulation_steps(k, batch_size, call = call))
      }, 1L
    ))
  }
  list(remat = remat, accumulation_steps = accumulation_steps)
}

# The name the printed code calls the model by: the symbol the user gave
# (as it is: the code backquotes a name that needs it), else "model".
search_model_name <- function(expr) {
  if (is.symbol(expr)) as.character(expr) else "model"
}

# `batch_dim_name`: a string, and on a topology "data", the batch axis of
# every mesh the search tries (axes "data" and "model").
check_search_batch_dim <- function(x, topology, call = rlang::caller_env()) {
  if (is.null(x)) {
    return(NULL)
  }
  check_string(x, arg = "batch_dim_name", call = call)
  if (!is.null(topology) && !identical(x, "data")) {
    kerasmesh_abort(
      c("On a topology, {.arg batch_dim_name} must be {.val data}.",
        x = "Received {.val {x}}.",
        i = "Every mesh the search tries on a topology has the axes
             {.val data} (the batch axis) and {.val model}: leave
             {.arg batch_dim_name} out, or search a {.fn device_mesh} whose
             axes you name."),
      kind = kinds$batch_dim_name, call = call
    )
  }
  x
}

check_search_memory <- function(x, call = rlang::caller_env()) {
  if (is.null(x)) {
    return("device")
  }
  memory <- check_bytes(x, allow_inf = TRUE, arg = "memory", call = call)
  if (is.infinite(memory)) NULL else as.numeric(memory)
}

# `bandwidth` and `flop_rate` make the time of a search on a mesh: given
# with another objective, or on a topology (whose links and compute give
# the time), they would be ignored.
check_search_time_figures <- function(bandwidth, flop_rate, objective,
                                      topology, call = rlang::caller_env()) {
  given <- c(bandwidth = !is.null(bandwidth), flop_rate = !is.null(flop_rate))
  if (!any(given) || (identical(objective, "time") && is.null(topology))) {
    return(invisible())
  }
  args <- names(given)[given] # nolint: object_usage_linter. cli reads it.
  kerasmesh_abort(
    c("{.arg {args}} must be given only for {.code objective = \"time\"}
       on a mesh.",
      x = if (is.null(topology)) {
        "The objective is {.val {objective}}: no time is modeled."
      } else {
        "On a topology, its links and compute give the time."
      },
      i = if (is.null(topology)) {
        "Leave {.arg {args}} out, or pass {.code objective = \"time\"}."
      } else {
        "Leave {.arg {args}} out."
      }),
    kind = kinds$argument, call = call
  )
}

# Bytes per second over each mesh axis: numbers or rate strings, as
# device_topology() reads its links, named by axis.
check_bandwidth <- function(x, call = rlang::caller_env()) {
  if (is.null(x)) {
    return(NULL)
  }
  what <- "bytes per second or rates such as {.val 450GB/s}, named by mesh
           axis"
  way_out <- "Such as {.code c(data = \"50GB/s\", model = \"450GB/s\")}."
  named <- !is.null(names(x)) && all(nzchar(names(x))) && !anyNA(names(x))
  if (!(is.numeric(x) || is.character(x) || is.list(x)) || !length(x) ||
        !named) {
    stop_input_type(x, what, way_out = way_out, arg = "bandwidth",
                    call = call)
  }
  twice <- unique(names(x)[duplicated(names(x))])
  if (length(twice)) {
    kerasmesh_abort(
      c("{.arg bandwidth} must give each mesh axis one figure.",
        x = "Given twice: {.val {twice}}."),
      kind = kinds$argument, call = call
    )
  }
  rates <- lapply(seq_along(x), function(i) {
    arg <- sprintf("bandwidth[\"%s\"]", names(x)[[i]])
    rate <- check_rate(x[[i]], arg = arg, call = call)
    if (!is_one_number(rate) || rate <= 0 || !is.finite(rate)) {
      stop_input_type(x[[i]], "positive, finite bytes per second or a rate
                      such as {.val 450GB/s}", way_out = way_out, arg = arg,
                      call = call)
    }
    as.numeric(rate)
  })
  stats::setNames(rates, names(x))
}

# At most `max_blocks`: the search builds and compiles the model at full
# depth to verify what it found, and no model has more transformer layers
# than that by far; a count past it (1e9) would only run out the time.
max_blocks <- 65536

check_blocks <- function(blocks, call = rlang::caller_env()) {
  if (is.null(blocks)) {
    return(NULL)
  }
  check_whole(blocks, max = max_blocks, call = call)
}

check_start <- function(x, call = rlang::caller_env()) {
  if (is.null(x)) {
    return(NULL)
  }
  if (inherits(x, "kerasmesh_layout_map")) {
    return(object_py(x, "start", call))
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

# Where a search keeps its profile: `TRUE` the user cache directory
# (search_cache_dir()), `FALSE` none, or a directory; NULL for none.
check_search_cache <- function(cache, call = rlang::caller_env()) {
  if (isTRUE(cache)) {
    return(search_cache_dir())
  }
  if (isFALSE(cache)) {
    return(NULL)
  }
  if (!rlang::is_string(cache) || !nzchar(trimws(cache))) {
    stop_input_type(cache, "`TRUE`, `FALSE` or a directory's name",
                    kind = kinds$argument, arg = "cache", call = call)
  }
  check_not_a_file(cache, "cache", call = call)
}
