#' Describe the machine a model trains on
#'
#' A device topology is the machine as you rent it: `nodes` of
#' `devices_per_node` accelerators each, every device's memory and peak
#' floating-point operations per second (by dtype), the links between
#' devices inside a node and between nodes (bandwidth and latency), and the
#' share of peak a training step reaches. Give it to [layout_cost()] or
#' [compare_layouts()] as `topology` and their costs say how long a step
#' takes there, in seconds. `device_topology()` is plain R: it needs no
#' Python.
#'
#' Start from a preset and change what differs, by name:
#' `device_topology("h100-sxm-80gb", nodes = 4)` is four nodes of eight
#' H100s; `device_topology("h100-sxm-80gb", inter_node_bandwidth = "25GB/s")`
#' one with slower network cards. Without a preset, give the figures of
#' your own hardware (`devices_per_node`, `memory`, `peak_flops` and
#' `intra_node_bandwidth`, and `inter_node_bandwidth` for more than one
#' node).
#'
#' @section Presets:
#' Nodes of eight GPUs joined by NVSwitch, as NVIDIA's DGX and HGX systems
#' and the clouds that rent them build them, with one InfiniBand network
#' card per GPU. Figures per device, from NVIDIA's datasheets (dense
#' figures: the datasheets' larger ones assume 2:4 sparsity):
# nolint start: line_length_linter. A table's rows are one line each.
#'
#' | preset | memory | peak bfloat16, float16 / float32 | in a node | between nodes |
#' |---|---|---|---|---|
#' | `"h100-sxm-80gb"` | 80 GB HBM3, 3.35 TB/s | 989 / 495 TFLOP/s | 450 GB/s (NVLink 4) | 50 GB/s (NDR, 400 Gb/s) |
#' | `"h200-sxm-141gb"` | 141 GB HBM3e, 4.8 TB/s | 989 / 495 TFLOP/s | 450 GB/s (NVLink 4) | 50 GB/s (NDR, 400 Gb/s) |
#' | `"a100-sxm-80gb"` | 80 GB HBM2e, 2.04 TB/s | 312 / 156 TFLOP/s | 300 GB/s (NVLink 3) | 25 GB/s (HDR, 200 Gb/s) |
# nolint end
#'
#' * Memory is the datasheet's capacity in GB (10^9 bytes); what one
#'   process can use is a little less.
#' * float32 is the TF32 tensor-core figure: JAX's default matrix
#'   precision computes float32 products in TF32 on these GPUs (without
#'   tensor cores an H100 does 67 TFLOP/s of float32, an A100 19.5).
#' * NVLink bandwidth is per GPU and per direction: the datasheets' 900
#'   GB/s (H100, H200) and 600 GB/s (A100) count both directions.
#' * Between nodes: DGX H100 and H200 nodes have one 400 Gb/s ConnectX-7
#'   (InfiniBand NDR) card per GPU, 50 GB/s; DGX A100 nodes one 200 Gb/s
#'   ConnectX-6 (HDR) card per GPU, 25 GB/s.
#' * Latency per step of a ring collective, from NCCL's tuning model
#'   (`src/graph/tuning.cc` in NCCL, the ring algorithm with the "Simple"
#'   protocol large transfers use): 3.4 microseconds over NVLink, 14 over
#'   the network.
#'
#' TPU pods are not a preset: a TPU v5p slice joins its chips in a 3-D
#' torus, where the bandwidth a mesh axis gets depends on how many torus
#' dimensions it spans rather than on whether it leaves a host, which two
#' levels of links can't say. Give such figures by hand where an
#' approximation helps.
#'
#' @section Compute efficiency:
#' `efficiency` is the share of peak FLOP/s a training step reaches. The
#' default, 0.4, is a round figure from published runs of large
#' transformers: 38 to 43% of bfloat16 peak training Llama 3 405B on 8,192
#' to 16,384 H100s (Llama 3 paper, Dubey et al. 2024), 52% on 3,072 A100s
#' for a 1-trillion-parameter GPT with Megatron-LM (Narayanan et al. 2021,
#' recomputation counted), 46% training PaLM on TPU v4 (Chowdhery et al.
#' 2022). Small models and small batches reach less.
#'
#' @param preset The name of a preset (see below), or `NULL` for hardware
#'   of your own.
#' @param ... Must be empty.
#' @param nodes The number of nodes (machines), a whole number.
#' @param devices_per_node The number of devices (GPUs) in one node.
#' @param memory The memory of one device: bytes, or a string such as
#'   `"80GB"` or `"16 GiB"`.
#' @param peak_flops Peak floating-point operations per second of one
#'   device: a vector named by dtype, such as
#'   `c(bfloat16 = 989e12, float32 = 495e12)`, or one number for every
#'   dtype. A cost uses the figure of the model's compute dtype.
#' @param intra_node_bandwidth,inter_node_bandwidth Bytes per second one
#'   device sends in each direction to a device of its node, and to a
#'   device of another node: a number, or a string such as `"450GB/s"` or
#'   `"400Gb/s"` (a lowercase `b` counts bits). `inter_node_bandwidth` is
#'   needed only for more than one node.
#' @param intra_node_latency,inter_node_latency Seconds per step of a ring
#'   collective inside a node and between nodes; 0 by default for hardware
#'   of your own.
#' @param efficiency The share of peak FLOP/s a training step reaches,
#'   above 0 and at most 1 (see below).
#' @param memory_bandwidth Bytes per second of one device's own memory (a
#'   number or a rate such as `"3.35TB/s"`), or `NULL`; shown, not used by
#'   the time model.
#' @return A `kerasmesh_device_topology`: a list with `name` (the preset,
#'   or `"custom"`), `description`, `nodes`, `devices_per_node`, `devices`
#'   (their product), `memory`, `memory_bandwidth`, `peak_flops`,
#'   `intra_node_bandwidth`, `inter_node_bandwidth`,
#'   `intra_node_latency`, `inter_node_latency`, `efficiency`, `links`
#'   (what the links are, where the preset says) and `given` (the figures
#'   given in place of the preset's). Numbers are bytes, bytes per second,
#'   FLOP/s and seconds.
#' @seealso [layout_cost()] and [compare_layouts()], whose `topology`
#'   turns a compiled step into seconds.
#' @export
#' @examples
#' device_topology("h100-sxm-80gb", nodes = 4)
#' device_topology("a100-sxm-80gb", devices_per_node = 4,
#'                 inter_node_bandwidth = "100Gb/s", efficiency = 0.3)
#' # A workstation of four GPUs over PCIe.
#' device_topology(devices_per_node = 4, memory = "24GB",
#'                 peak_flops = c(bfloat16 = 165e12, float32 = 83e12),
#'                 intra_node_bandwidth = "32GB/s")
device_topology <- function(preset = NULL, ..., nodes = 1,
                            devices_per_node = NULL, memory = NULL,
                            peak_flops = NULL, intra_node_bandwidth = NULL,
                            inter_node_bandwidth = NULL,
                            intra_node_latency = NULL,
                            inter_node_latency = NULL, efficiency = NULL,
                            memory_bandwidth = NULL) {
  check_dots_none()
  given <- list(
    devices_per_node = devices_per_node, memory = memory,
    peak_flops = peak_flops, intra_node_bandwidth = intra_node_bandwidth,
    inter_node_bandwidth = inter_node_bandwidth,
    intra_node_latency = intra_node_latency,
    inter_node_latency = inter_node_latency, efficiency = efficiency,
    memory_bandwidth = memory_bandwidth
  )
  given <- given[!vapply(given, is.null, TRUE)]
  base <- topology_preset(preset)
  figures <- utils::modifyList(base, given)
  figures$nodes <- nodes
  new_device_topology(topology_figures(figures), preset = preset,
                      given = if (is.null(preset)) character() else
                        names(given))
}

# -- presets ----------------------------------------------------------------

# Figures per device (see ?device_topology for their sources).
topology_presets <- function() {
  hopper <- list(
    devices_per_node = 8L, memory = 80e9, memory_bandwidth = 3.35e12,
    peak_flops = c(bfloat16 = 989e12, float16 = 989e12, float32 = 495e12),
    intra_node_bandwidth = 450e9, inter_node_bandwidth = 50e9,
    intra_node_latency = 3.4e-6, inter_node_latency = 14e-6,
    efficiency = 0.4,
    links = c(intra = "NVLink 4 through NVSwitch",
              inter = "InfiniBand NDR, 400 Gb/s a GPU")
  )
  list(
    "h100-sxm-80gb" = c(list(description = "NVIDIA H100 SXM 80 GB"), hopper),
    "h200-sxm-141gb" = c(
      list(description = "NVIDIA H200 SXM 141 GB"),
      utils::modifyList(hopper, list(memory = 141e9,
                                     memory_bandwidth = 4.8e12))
    ),
    "a100-sxm-80gb" = c(
      list(description = "NVIDIA A100 SXM 80 GB"),
      utils::modifyList(hopper, list(
        memory_bandwidth = 2.039e12,
        peak_flops = c(bfloat16 = 312e12, float16 = 312e12,
                       float32 = 156e12),
        intra_node_bandwidth = 300e9, inter_node_bandwidth = 25e9,
        links = c(intra = "NVLink 3 through NVSwitch",
                  inter = "InfiniBand HDR, 200 Gb/s a GPU")
      ))
    )
  )
}

topology_preset <- function(preset, call = rlang::caller_env()) {
  presets <- topology_presets()
  if (is.null(preset)) {
    return(list(description = "custom devices", intra_node_latency = 0,
                inter_node_latency = 0, efficiency = 0.4))
  }
  if (!is.character(preset) || length(preset) != 1 || is.na(preset)) {
    stop_input_type(preset, "a preset name", kind = kinds$topology,
                    way_out = "Presets: {.val {names(presets)}}.",
                    call = call)
  }
  if (!preset %in% names(presets)) {
    kerasmesh_abort(
      c("{.arg preset} must be the name of a preset.",
        x = "Received {.val {preset}}.",
        i = "Presets: {.val {names(presets)}}."),
      kind = kinds$topology, call = call
    )
  }
  presets[[preset]]
}

# -- figures ------------------------------------------------------------------

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
      topology_check(parse(x, arg = name(arg), call = call))
    if (bad(value) || !is.numeric(value) || length(value) != 1) {
      stop_input_type(x, "a positive number", kind = kinds$topology,
                      arg = name(arg), call = call)
    }
    as.vector(value)
  }
  for (arg in c("devices_per_node", "memory", "peak_flops",
                "intra_node_bandwidth")) {
    if (is.null(f[[arg]]) && nzchar(prefix)) {
      kerasmesh_abort(
        c("{.arg {name(arg)}} must be given.",
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
  for (arg in c("intra_node_latency", "inter_node_latency")) {
    f[[arg]] <- check_number(f[[arg]], "a number of seconds, 0 or more",
                             min = 0, kind = kinds$topology, arg = name(arg),
                             call = call)
  }
  f$efficiency <- check_number(
    f$efficiency, "a share of peak FLOP/s, above 0 and at most 1", min = 0,
    max = 1, exclusive_min = TRUE, kind = kinds$topology,
    arg = name("efficiency"), call = call
  )
  f
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

topology_peak_flops <- function(x, call, arg = "peak_flops") {
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

new_device_topology <- function(f, preset = NULL, given = character()) {
  links <- f$links %||% c(intra = NA_character_, inter = NA_character_)
  if (any(c("intra_node_bandwidth", "intra_node_latency") %in% given)) {
    links[["intra"]] <- NA_character_
  }
  if (any(c("inter_node_bandwidth", "inter_node_latency") %in% given)) {
    links[["inter"]] <- NA_character_
  }
  structure(
    list(
      name = preset %||% "custom", description = f$description,
      nodes = f$nodes, devices_per_node = f$devices_per_node,
      devices = f$nodes * f$devices_per_node, memory = f$memory,
      memory_bandwidth = f$memory_bandwidth %||% NA_real_,
      peak_flops = f$peak_flops,
      intra_node_bandwidth = f$intra_node_bandwidth,
      inter_node_bandwidth = f$inter_node_bandwidth %||% NA_real_,
      intra_node_latency = f$intra_node_latency,
      inter_node_latency = f$inter_node_latency,
      efficiency = f$efficiency, links = links, given = given
    ),
    class = "kerasmesh_device_topology"
  )
}

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
               "inter_node_bandwidth", "intra_node_latency",
               "inter_node_latency", "efficiency", "memory_bandwidth")
  # Checked again, as a topology edited by hand (`topo$nodes <- NA`) may
  # hold anything; NA is how device_topology() says a figure it may lack
  # was not given.
  f <- unclass(x)[c(figures, "peak_flops")]
  for (optional in c("inter_node_bandwidth", "memory_bandwidth")) {
    v <- f[[optional]]
    if (length(v) == 1 && is.atomic(v) && is.na(v)) f[optional] <- list(NULL)
  }
  f <- topology_figures(f, call = call, prefix = "topology$")
  values <- c(f[intersect(figures, names(f))],
              list(name = if (is.character(x$name) && length(x$name) == 1 &&
                                !is.na(x$name)) x$name else "custom"))
  flops <- f$peak_flops
  values$peak_flops <- if (is.null(names(flops))) flops else as.list(flops)
  values
}
