# The figures of a device topology checked: as device_topology() receives
# them, and again as layout_cost() and its siblings receive a topology
# (which may have been edited by hand), turned into plain values for the
# shim.

# The figures of a topology, checked and turned into numbers: each problem
# is an error of kind "topology" naming the figure (`prefix` and its name,
# as the user wrote it: "nodes", or "topology$nodes" for a topology edited
# by hand), the value and the rule.
topology_figures <- function(f, call = rlang::caller_env(), prefix = "") {
  name <- function(figure) paste0(prefix, figure)
  positive <- function(x, arg, parse) {
    bad <- function(v) {
      is.numeric(v) && length(v) == 1 && (is.na(v) || !is.finite(v) || v <= 0)
    }
    value <- if (bad(x)) x else
      topology_check(parse(x, kind = kinds$topology, arg = name(arg),
                           call = call))
    if (bad(value) || !is.numeric(value) || length(value) != 1) {
      stop_input_type(x, "a positive, finite number", kind = kinds$topology,
                      arg = name(arg), call = call)
    }
    as.vector(value)
  }
  topology_required(f, call, prefix)
  f <- topology_counts(f, call, name)
  f$memory <- positive(f$memory, "memory", check_bytes)
  f$peak_flops <- topology_peak_flops(f$peak_flops, call, name("peak_flops"))
  f$intra_node_bandwidth <- positive(f$intra_node_bandwidth,
                                     "intra_node_bandwidth", check_rate)
  if (f$nodes > 1 || !is.null(f$inter_node_bandwidth)) {
    if (is.null(f$inter_node_bandwidth)) {
      kerasmesh_abort(
        c("{.arg {name(\"inter_node_bandwidth\")}} must be given for more
           than one node.",
          x = "Received {.code {name(\"nodes\")} = {f$nodes}}."),
        kind = kinds$topology, call = call
      )
    }
    f$inter_node_bandwidth <- positive(f$inter_node_bandwidth,
                                       "inter_node_bandwidth", check_rate)
  }
  if (!is.null(f$memory_bandwidth)) {
    f$memory_bandwidth <- positive(f$memory_bandwidth, "memory_bandwidth",
                                   check_rate)
  }
  if (!is.null(f$all_reduce_bandwidth)) {
    f$all_reduce_bandwidth <- positive(f$all_reduce_bandwidth,
                                       "all_reduce_bandwidth", check_rate)
  }
  for (arg in c("intra_node_latency", "inter_node_latency")) {
    f[[arg]] <- check_number(f[[arg]], "a finite number of seconds, 0 or
                             more", min = 0, max = .Machine$double.xmax,
                             kind = kinds$topology, arg = name(arg),
                             call = call)
  }
  f
}

# The figures every topology has, present: on a topology edited by hand
# (`prefix` "topology$") or, for hardware without a preset, as arguments.
topology_required <- function(f, call, prefix) {
  for (arg in c("devices_per_node", "memory", "peak_flops",
                "intra_node_bandwidth")) {
    if (is.null(f[[arg]]) && nzchar(prefix)) {
      kerasmesh_abort(
        c("{.arg {paste0(prefix, arg)}} must be given.",
          i = "Make a topology with {.fn device_topology}."),
        kind = kinds$topology, call = call
      )
    }
    if (is.null(f[[arg]])) {
      kerasmesh_abort(
        c("{.arg {arg}} must be given for hardware without a preset.",
          i = "Give {.arg {arg}}, or start from a preset such as
               {.code device_topology(\"h100-sxm-80gb\")}."),
        kind = kinds$topology, call = call
      )
    }
  }
  invisible()
}

# `nodes` and `devices_per_node` as integers whose product, the devices, R's
# integers hold too (a count past them would be NA).
topology_counts <- function(f, call, name) {
  f$nodes <- check_whole(f$nodes, kind = kinds$topology, arg = name("nodes"),
                         call = call)
  f$devices_per_node <- check_whole(f$devices_per_node,
                                    kind = kinds$topology,
                                    arg = name("devices_per_node"),
                                    call = call)
  devices <- as.numeric(f$nodes) * f$devices_per_node
  if (devices > .Machine$integer.max) {
    args <- name(c("nodes", "devices_per_node")) # nolint: object_usage_linter
    kerasmesh_abort(
      c("{.arg {args[1]}} times {.arg {args[2]}} must be at most
         {format_whole(.Machine$integer.max)} devices.",
        x = "Received {.code {args[1]} = {format_whole(f$nodes)}} and
             {.code {args[2]} = {format_whole(f$devices_per_node)}}:
             {format_whole(devices)} devices."),
      kind = kinds$topology, call = call
    )
  }
  f
}

# `value`, or its kerasmesh error with the class of kind "topology" added.
topology_check <- function(value) {
  tryCatch(value, kerasmesh_error = function(e) {
    class(e) <- unique(c(error_classes(kinds$topology), class(e)))
    stop(e)
  })
}

# `efficiency`: one number (matrix products') or figures named by matmul,
# attention and memory, each in (0, 1]; those not given are `base`'s.
topology_efficiency <- function(x, base, call = rlang::caller_env(),
                                arg = "efficiency") {
  if (is.numeric(x) && length(x) == 1 && is.null(names(x))) {
    x <- c(matmul = x)
  }
  if (is.numeric(x)) {
    topology_names(x, names(default_efficiency),
                   "matmul, attention or memory",
                   "For example {.code c(matmul = 0.7, attention = 0.5)}.",
                   arg, call)
  }
  named <- is.numeric(x) && length(x) >= 1 && !is.null(names(x)) &&
    !anyDuplicated(names(x))
  if (!named || anyNA(x) || any(x <= 0 | x > 1)) {
    stop_input_type(
      x, "shares above 0 and at most 1, named by matmul, attention or
          memory",
      kind = kinds$topology, arg = arg, call = call,
      way_out = "For example {.code c(matmul = 0.7, attention = 0.5)}."
    )
  }
  out <- base[names(default_efficiency)]
  out[names(x)] <- as.numeric(x)
  out
}

topology_peak_flops <- function(x, call, arg = "peak_flops") {
  if (is.numeric(x) && !is.null(names(x))) {
    topology_names(x, flops_dtypes, "dtypes", "Dtypes: {.val {known}}.", arg,
                   call)
  }
  ok <- is.numeric(x) && length(x) > 0 && !anyNA(x) && all(is.finite(x)) &&
    all(x > 0) && (
      (is.null(names(x)) && length(x) == 1) ||
        (!is.null(names(x)) && !anyNA(names(x)) && all(nzchar(names(x))) &&
           !anyDuplicated(names(x)))
    )
  if (!ok) {
    stop_input_type(
      x, "positive FLOP/s named by dtype, or one number for every dtype",
      kind = kinds$topology, arg = arg, call = call,
      way_out = "For example {.code c(bfloat16 = 989e12, float32 = 495e12)}."
    )
  }
  stats::setNames(as.numeric(x), names(x))
}

# Figures named by `known` names only, each once: an error naming the
# others (or the repeated ones). `what` says which names, `way_out` (glue,
# `known` in scope) how to name them.
topology_names <- function(x, known, what, way_out, arg, call) {
  given <- names(x)
  given[is.na(given)] <- ""
  unknown <- setdiff(given, known)
  if (length(unknown)) {
    kerasmesh_abort(
      c("{.arg {arg}} must be named by {what}.",
        x = "Received {.val {unknown}}.", i = way_out),
      kind = kinds$topology, call = call
    )
  }
  repeated <- unique(given[duplicated(given)]) # nolint: object_usage_linter
  if (length(repeated)) {
    kerasmesh_abort(
      c("{.arg {arg}} must name each of its figures once.",
        x = "Received {.val {repeated}} more than once."),
      kind = kinds$topology, call = call
    )
  }
}

# The dtypes a step computes in, as Keras names them: what `peak_flops`
# may be named by.
flops_dtypes <- c("bfloat16", "float16", "float32", "float64",
                  "float8_e4m3fn", "float8_e5m2", "int8")

# `topology =` of layout_cost() and its siblings: NULL, or a topology's
# figures as plain values for the shim.
check_topology <- function(x, call = rlang::caller_env()) {
  if (is.null(x)) {
    return(NULL)
  }
  if (!inherits(x, "kerasmesh_device_topology")) {
    stop_input_type(x, "a device topology", show_value = FALSE,
                    kind = kinds$topology, arg = "topology", call = call,
                    way_out = "Make one with {.fn device_topology}.")
  }
  figures <- c("nodes", "devices_per_node", "memory", "intra_node_bandwidth",
               "inter_node_bandwidth", "all_reduce_bandwidth",
               "intra_node_latency", "inter_node_latency", "memory_bandwidth")
  # Checked again, as a topology edited by hand (`topo$nodes <- NA`) may
  # hold anything; NA is how device_topology() says a figure it may lack
  # was not given.
  f <- unclass(x)[c(figures, "peak_flops")]
  for (optional in c("inter_node_bandwidth", "all_reduce_bandwidth",
                     "memory_bandwidth")) {
    v <- f[[optional]]
    if (length(v) == 1 && is.atomic(v) && is.na(v)) f[optional] <- list(NULL)
  }
  f <- topology_figures(f, call = call, prefix = "topology$")
  devices <- f$nodes * f$devices_per_node
  # `[[`: `x$devices`, once removed, would match `devices_per_node`.
  given <- x[["devices"]]
  if (!is.numeric(given) ||
        !identical(as.numeric(given), as.numeric(devices))) {
    received <- paste(deparse(given), collapse = " ") # nolint: object_usage_linter
    kerasmesh_abort(
      c("{.arg topology$devices} must be {.arg topology$nodes} times
         {.arg topology$devices_per_node}: {format_whole(devices)}.",
        x = "Received {.code topology$devices = {received}}.",
        i = "Make a topology with {.fn device_topology}."),
      kind = kinds$topology, call = call
    )
  }
  topology_labels(x, call)
  values <- c(f[intersect(figures, names(f))], list(name = x$name))
  efficiency <- topology_efficiency(x$efficiency, default_efficiency,
                                    call = call, arg = "topology$efficiency")
  values$efficiency <- unname(efficiency[["matmul"]])
  values$attention_efficiency <- unname(efficiency[["attention"]])
  values$memory_efficiency <- unname(efficiency[["memory"]])
  flops <- f$peak_flops
  values$peak_flops <- if (is.null(names(flops))) flops else as.list(flops)
  values
}

# The words a topology prints, as device_topology() makes them: `name` and
# `description` one string each, `links` the two links' names (NA where
# not known), `given` the figures given in place of a preset's.
topology_labels <- function(x, call) {
  one_string <- function(v) is.character(v) && length(v) == 1 && !is.na(v)
  ok <- c(
    name = one_string(x$name), description = one_string(x$description),
    links = is.character(x$links) && length(x$links) == 2 &&
      identical(names(x$links), c("intra", "inter")),
    given = is.character(x$given) && !anyNA(x$given)
  )
  check_fields(
    x, ok, c(links = "the names of the two links, `intra` and `inter`",
             given = "names of figures", default = "one string"),
    way_out = "Make a topology with {.fn device_topology}.",
    prefix = "topology", kind = kinds$topology, call = call
  )
}
