# The parts of a cost that come from the machine and from XLA's log: the
# modeled time of a step on a topology, how bfloat16 was compiled, and
# the tensors XLA could reshard only by replicating them.

#' @section Time on a machine:
#' With a `topology` ([device_topology()]), the cost has `time`, the
#' modeled seconds of one step per global batch, in parts:
#' * `compute`: XLA's count of floating-point operations per device,
#'   over the topology's peak FLOP/s for the model's compute dtype times
#'   its `efficiency`;
#' * `recompute`: the operations spent recomputing activations;
#' * `communication`: seconds per set of mesh axes. Each collective sends
#'   a share of its bytes set by its algorithm: a ring all-reduce
#'   2(n-1)/n, an all-gather, reduce-scatter or all-to-all (n-1)/n, a
#'   collective-permute all of them, over the slowest link its device
#'   groups span: `inter_node_bandwidth` when a group spans nodes,
#'   `intra_node_bandwidth` otherwise. Each ring step adds a latency,
#'   `inter_node_latency` for the steps between nodes and
#'   `intra_node_latency` for the others, as NCCL counts them;
#' * `total`: their sum (compute and communication are not overlapped);
#' * and what they come from: `compute_dtype`, `flop_rate` (FLOP/s
#'   reached), `accumulation_steps`.
#'
#' Which node a device sits in: the mesh's devices, in the order of their
#' ids, fill the first node, then the next. So the mesh's shape and
#' device order decide which mesh axis crosses nodes: on 4 nodes of 8, a
#' mesh `c(data = 4, model = 8)` keeps `"model"` inside each node. A
#' topology with another number of devices than the mesh is an error of
#' class `kerasmesh_error_topology_devices`; one without peak FLOP/s for
#' the model's compute dtype, of class `kerasmesh_error_topology`.
#'
#' @section What the compile says:
#' * `bfloat16`: XLA's CPU backend computes bfloat16 in float32, which
#'   would count a `mixed_bfloat16` model's activations and collectives
#'   at 4 bytes where GPUs and TPUs keep 2. On CPU, kerasmesh compiles a
#'   step's bfloat16 as float16 (the same size, which the CPU backend
#'   keeps), so the figures are a GPU's: `"float16"`. `"absent"`: the
#'   step has no bfloat16; `"native"`: a GPU or TPU compiled it;
#'   `"float32"`: the CPU's widened figures (where the retyped step could
#'   not be compiled), said in the print-out.
#' * `attention`: on a GPU, Keras's `ops.dot_product_attention` runs
#'   bfloat16 and float16 attention fused (cuDNN's flash attention), never
#'   keeping the scores of every query against every key; XLA's CPU
#'   backend keeps them whole, in float32. On CPU, kerasmesh costs such
#'   attention computed in blocks of 512 queries, each recomputed in the
#'   backward pass: the same result, one block's scores in memory, as on
#'   a GPU: `"fused"`. `"written"`: attention costed as the model computes
#'   it (in float32, shorter than two blocks, with a bias or soft cap, on
#'   a GPU or TPU, or written out as its own operations).
#' * `reshardings`: a data frame, one row per tensor XLA could only
#'   reshard by replicating it in full on every device and partitioning
#'   it again (XLA's "involuntary full rematerialization" warnings):
#'   `op_name` (the operation, named by its layer), `instruction`,
#'   `shape` (per device), `source` and `target` (XLA's shardings). Such a
#'   layout moves and holds more than its collectives show.
#' * `xla_log`: other lines XLA wrote while compiling. What XLA writes
#'   is kept off the console; a compile left running by `timeout` writes
#'   to it again.
#' * `compute_dtype`: the dtype most of the model's parameters compute in.
#' @param topology A [device_topology()] to model the step's time on, or
#'   `NULL` for none (see below).
#' @name layout_cost
#' @order 2
#' @examplesIf keras_available()
#' # The same step on one node of 8 H100s: its modeled seconds.
#' h100 <- device_topology("h100-sxm-80gb")
#' cost <- layout_cost(build, model_parallel(lm), batch_size = 16,
#'                     optimizer = "adam", loss = "mse", topology = h100)
#' cost$time
NULL

new_cost_time <- function(desc) {
  if (is.null(desc)) {
    return(NULL)
  }
  comm <- desc$communication
  list(
    compute = as.numeric(desc$compute),
    recompute = as.numeric(desc$recompute),
    communication = stats::setNames(as.numeric(unlist(comm$seconds)),
                                    as.character(unlist(comm$axes))),
    total = as.numeric(desc$total),
    compute_dtype = desc$compute_dtype,
    flop_rate = as.numeric(desc$flop_rate),
    accumulation_steps = as.integer(desc$accumulation_steps)
  )
}

new_cost_reshardings <- function(desc) {
  column <- function(name) as.character(unlist(desc[[name]]))
  data.frame(op_name = column("op_name"), instruction = column("instruction"),
             shape = column("shape"), source = column("source"),
             target = column("target"), stringsAsFactors = FALSE)
}

# What the compile said that a reader of the figures must know.
format_compile_notes <- function(x) {
  n <- nrow(x$reshardings)
  c(
    if (identical(x$bfloat16, "float16")) {
      "bfloat16 costed at 2 bytes, as GPUs keep it (compiled as float16)"
    },
    if (identical(x$bfloat16, "float32")) {
      c("bfloat16 costed at 4 bytes, as XLA's CPU backend computes it:",
        "  activations and collectives are larger than a GPU's")
    },
    if (identical(x$attention, "fused")) {
      "attention costed as GPUs' fused attention runs it: no scores kept"
    },
    if (n > 0) {
      sprintf("XLA replicates %s in full to reshard %s (see $reshardings)",
              count_text(n, "tensor"), if (n == 1) "it" else "them")
    }
  )
}
# The lines of a cost's modeled time: the total per global batch, then
# its parts (compute, recomputation, communication by mesh axes).
format_cost_time <- function(time, topology) {
  if (is.null(time)) {
    return(NULL)
  }
  on <- ""
  if (!is.null(topology)) {
    on <- sprintf(" on %s (%s of %s)", topology$name,
                  count_text(topology$nodes, "node"),
                  format_whole(topology$devices_per_node))
  }
  steps <- time$accumulation_steps %||% 1L
  comm <- time$communication
  labels <- c(sprintf("compute (%s at %s)", time$compute_dtype,
                      format_flop_rate(time$flop_rate)),
              if (time$recompute > 0) "recompute",
              sprintf("communication over %s",
                      ifelse(names(comm) == "", "no axis", names(comm))))
  seconds <- c(time$compute, if (time$recompute > 0) time$recompute, comm)
  c(
    sprintf("Time per global batch: %s%s", format_seconds(time$total), on),
    if (steps > 1) {
      sprintf("  (%s micro-batches, each the step compiled here)",
              format_whole(steps))
    },
    format_table(data.frame(part = labels, seconds = format_seconds(seconds),
                            stringsAsFactors = FALSE),
                 header = NULL, right = 2)
  )
}
