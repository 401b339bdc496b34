# Presets of device_topology(): the figures of hardware sold in nodes of
# eight GPUs, and the defaults for hardware of your own.

# The efficiencies of hardware of your own (see ?device_topology).
default_efficiency <- c(matmul = 0.7, attention = 0.5, memory = 0.9)

# Figures per device (see ?device_topology for their sources).
topology_presets <- function() {
  hopper <- list(
    devices_per_node = 8L, memory = 80e9, memory_bandwidth = 3.35e12,
    peak_flops = c(bfloat16 = 989e12, float16 = 989e12, float32 = 495e12),
    intra_node_bandwidth = 370e9, all_reduce_bandwidth = 480e9,
    inter_node_bandwidth = 47e9,
    intra_node_latency = 3.4e-6, inter_node_latency = 14e-6,
    efficiency = c(matmul = 0.72, attention = 0.5, memory = 0.9),
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
        intra_node_bandwidth = 200e9, all_reduce_bandwidth = 200e9,
        inter_node_bandwidth = 23e9,
        efficiency = c(matmul = 0.77, attention = 0.6, memory = 0.9),
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
                inter_node_latency = 0, efficiency = default_efficiency))
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
