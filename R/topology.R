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
#' | preset | memory | peak bfloat16, float16 / float32 | links in a node | between nodes |
#' |---|---|---|---|---|
#' | `"h100-sxm-80gb"` | 80 GB HBM3, 3.35 TB/s | 989 / 495 TFLOP/s | NVLink 4 | NDR, 400 Gb/s |
#' | `"h200-sxm-141gb"` | 141 GB HBM3e, 4.8 TB/s | 989 / 495 TFLOP/s | NVLink 4 | NDR, 400 Gb/s |
#' | `"a100-sxm-80gb"` | 80 GB HBM2e, 2.04 TB/s | 312 / 156 TFLOP/s | NVLink 3 | HDR, 200 Gb/s |
#'
#' What a step reaches of them, as measured (the time model, below, uses
#' these; they are the same for every model and layout):
#'
#' | preset | all-gather, reduce-scatter in a node | all-reduce in a node | a network card | matrix products | attention | memory |
#' |---|---|---|---|---|---|---|
#' | H100, H200 | 370 GB/s | 480 GB/s | 47 GB/s | 72% | 50% | 90% |
#' | A100 | 200 GB/s | 200 GB/s | 23 GB/s | 77% | 60% | 90% |
# nolint end
#'
#' * Memory is the datasheet's capacity in GB (10^9 bytes); what one
#'   process can use is a little less.
#' * float32 is the TF32 tensor-core figure: JAX's default matrix
#'   precision computes float32 products in TF32 on these GPUs (without
#'   tensor cores an H100 does 67 TFLOP/s of float32, an A100 19.5).
#' * Bandwidths are NCCL's bus bandwidths as nccl-tests measures them
#'   (its `doc/PERFORMANCE.md` defines them), for large messages. H100:
#'   ring all-gather and reduce-scatter in a node 365-370 GB/s, 80% of
#'   NVLink 4's 450 GB/s a direction; all-reduce with NVLink SHARP (the
#'   switch reduces) 476-480 GB/s; 46-48 GB/s per 400 Gb/s card between
#'   nodes (NVIDIA nccl-tests issues 160, 212 and 290). A100: about 200
#'   GB/s for all-reduce among eight A100 80GB over NVLink 3 (nccl-tests
#'   issues 149 and 178), no NVLink SHARP; 21-24 GB/s per 200 Gb/s HDR
#'   card (issue 119: 85-96 GB/s over four).
#' * Matrix products: bfloat16 products of transformer sizes reach 705-758
#'   TFLOP/s on Hopper (8192 x 8192 x 2048-8192, tile-ai/tilelang's
#'   `benchmark/matmul`, measured on an H800, an H100's compute), 72% of
#'   peak; cuBLAS 239 TFLOP/s at 4096 cubed on an A100, 77%.
#' * Attention: fused attention kernels reach up to 75% of peak forward on
#'   an H100 and less backward (FlashAttention-3, Shah et al. 2024), up to
#'   73% on an A100 (FlashAttention-2, Dao 2023); with the backward pass's
#'   larger share of the work, and Keras's masks (cuDNN computes every
#'   score where the mask is not causal), 50% and 60%.
#' * Memory: copying kernels reach 90% of the datasheet's bandwidth
#'   (STREAM-like copies, about 3.0 of 3.35 TB/s on an H100).
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
#' @section The time model:
#' A cost's time ([layout_cost()]) comes from these figures alone, for
#' every model: each operation of the compiled step takes its FLOPs over
#' peak times `efficiency` (matrix products, fused attention), or its bytes
#' over `memory_bandwidth` times the memory efficiency (everything else);
#' each collective the share of its bytes its algorithm moves over the bus
#' bandwidth of the links it spans. Collectives the compiler overlaps with
#' compute run beside it. The figures were checked against published,
#' measured training runs, not fitted to them (see the cost's docs).
#'
#' @param preset The name of a preset (see below), or `NULL` for hardware
#'   of your own.
#' @param ... Must be empty.
#' @param nodes The number of nodes (machines), a whole number.
#' @param devices_per_node The number of devices (GPUs) in one node.
#' @param memory The memory of one device: bytes, or a string such as
#'   `"80GB"` or `"16 GiB"` (a size counts bytes in any case: `"80Gb"` is
#'   80 GB, where a rate's lowercase `b` counts bits).
#' @param peak_flops Peak floating-point operations per second of one
#'   device: a vector named by dtype, such as
#'   `c(bfloat16 = 989e12, float32 = 495e12)`, or one number for every
#'   dtype; with a preset, figures named by dtype replace the preset's of
#'   those dtypes. A cost uses the figure of the model's compute dtype.
#' @param intra_node_bandwidth,inter_node_bandwidth The bus bandwidth
#'   NCCL reaches (bytes per second, as nccl-tests reports it) for an
#'   all-gather or reduce-scatter among the devices of a node, and for one
#'   device's network card between nodes: a number, or a string such as
#'   `"370GB/s"` or `"400Gb/s"` (a lowercase `b` counts bits).
#'   `inter_node_bandwidth` is needed only for more than one node. A
#'   collective across nodes reaches the card's figure times its devices
#'   in each node, at most `intra_node_bandwidth`.
#' @param all_reduce_bandwidth The bus bandwidth of an all-reduce among the
#'   devices of a node, where it differs from `intra_node_bandwidth` (NVLink
#'   SHARP reduces in the switch); `NULL` for the same.
#' @param intra_node_latency,inter_node_latency Seconds per step of a ring
#'   collective inside a node and between nodes; 0 by default for hardware
#'   of your own.
#' @param efficiency The share of a figure the step's operations reach,
#'   each above 0 and at most 1 (see the presets): a vector named by
#'   `matmul` (of peak FLOP/s, matrix products), `attention` (of peak,
#'   fused attention) and `memory` (of `memory_bandwidth`, every other
#'   operation), any of them; one number is `matmul`'s. Figures not given
#'   are the preset's, or 0.7, 0.5 and 0.9 for hardware of your own.
#' @param memory_bandwidth Bytes per second of one device's own memory (a
#'   number or a rate such as `"3.35TB/s"`), or `NULL`: then the time of
#'   operations bound by memory is not counted.
#' @return A `kerasmesh_device_topology`: a list with `name` (the preset,
#'   or `"custom"`), `description`, `nodes`, `devices_per_node`, `devices`
#'   (their product), `memory`, `memory_bandwidth`, `peak_flops`,
#'   `intra_node_bandwidth`, `inter_node_bandwidth`,
#'   `all_reduce_bandwidth`, `intra_node_latency`, `inter_node_latency`,
#'   `efficiency` (named `matmul`, `attention`, `memory`), `links`
#'   (what the links are, where the preset says) and `given` (the figures
#'   given in place of the preset's). Numbers are bytes, bytes per second,
#'   FLOP/s and seconds.
#' @seealso [layout_cost()] and [compare_layouts()], whose `topology`
#'   turns a compiled step into seconds.
#' @export
#' @examples
#' device_topology("h100-sxm-80gb", nodes = 4)
#' device_topology("a100-sxm-80gb", devices_per_node = 4,
#'                 inter_node_bandwidth = "12GB/s",
#'                 efficiency = c(matmul = 0.6))
#' # A workstation of four GPUs over PCIe.
#' device_topology(devices_per_node = 4, memory = "24GB",
#'                 peak_flops = c(bfloat16 = 165e12, float32 = 83e12),
#'                 intra_node_bandwidth = "25GB/s",
#'                 memory_bandwidth = "1TB/s")
device_topology <- function(preset = NULL, ..., nodes = 1,
                            devices_per_node = NULL, memory = NULL,
                            peak_flops = NULL, intra_node_bandwidth = NULL,
                            inter_node_bandwidth = NULL,
                            all_reduce_bandwidth = NULL,
                            intra_node_latency = NULL,
                            inter_node_latency = NULL, efficiency = NULL,
                            memory_bandwidth = NULL) {
  check_dots_none()
  given <- list(
    devices_per_node = devices_per_node, memory = memory,
    peak_flops = peak_flops, intra_node_bandwidth = intra_node_bandwidth,
    inter_node_bandwidth = inter_node_bandwidth,
    all_reduce_bandwidth = all_reduce_bandwidth,
    intra_node_latency = intra_node_latency,
    inter_node_latency = inter_node_latency, efficiency = efficiency,
    memory_bandwidth = memory_bandwidth
  )
  given <- given[!vapply(given, is.null, TRUE)]
  base <- topology_preset(preset)
  # FLOP/s named by dtype replace the preset's of those dtypes alone.
  if (!is.null(peak_flops)) {
    peak_flops <- topology_peak_flops(peak_flops, rlang::current_env())
    if (!is.null(names(peak_flops)) && !is.null(names(base$peak_flops))) {
      given$peak_flops <- replace(base$peak_flops, names(peak_flops),
                                  peak_flops)
    }
  }
  figures <- utils::modifyList(base, given[names(given) != "efficiency"])
  figures$nodes <- nodes
  figures$efficiency <- topology_efficiency(efficiency %||% base$efficiency,
                                            base$efficiency,
                                            call = rlang::current_env())
  new_device_topology(topology_figures(figures), preset = preset,
                      given = if (is.null(preset)) character() else
                        names(given))
}

new_device_topology <- function(f, preset = NULL, given = character()) {
  links <- f$links %||% c(intra = NA_character_, inter = NA_character_)
  if (any(c("intra_node_bandwidth", "intra_node_latency") %in% given)) {
    links[["intra"]] <- NA_character_
  }
  if (any(c("inter_node_bandwidth", "inter_node_latency") %in% given)) {
    links[["inter"]] <- NA_character_
  }
  stamp_fields(structure(
    list(
      name = preset %||% "custom", description = f$description,
      nodes = f$nodes, devices_per_node = f$devices_per_node,
      devices = f$nodes * f$devices_per_node, memory = f$memory,
      memory_bandwidth = f$memory_bandwidth %||% NA_real_,
      peak_flops = f$peak_flops,
      intra_node_bandwidth = f$intra_node_bandwidth,
      inter_node_bandwidth = f$inter_node_bandwidth %||% NA_real_,
      all_reduce_bandwidth = f$all_reduce_bandwidth %||% NA_real_,
      intra_node_latency = f$intra_node_latency,
      inter_node_latency = f$inter_node_latency,
      efficiency = f$efficiency, links = links, given = given
    ),
    class = "kerasmesh_device_topology"
  ))
}
