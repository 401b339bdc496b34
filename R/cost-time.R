# The parts of a cost that come from the machine and from XLA's log: the
# modeled time of a step on a topology, how bfloat16 was compiled, and
# the tensors XLA could reshard only by replicating them.

#' @section Time on a machine:
#' With a `topology` ([device_topology()]), the step is compiled for that
#' machine's GPUs when XLA's GPU compiler is installed (see below), and the
#' cost has `time`, the modeled seconds of one step per global batch, in
#' parts, from the time model of [device_topology()]:
#' * `compute`: the step's operations, each at its roofline: matrix
#'   products at the topology's peak FLOP/s for the model's compute dtype
#'   times its matrix efficiency, fused attention at its attention
#'   efficiency, every other operation its bytes over the memory bandwidth;
#'   `parts` splits it by what bounds each (`matmul`, `attention`,
#'   `memory`);
#' * `recompute`: the part of it spent recomputing activations;
#' * `communication`: per set of mesh axes, the seconds each device waits
#'   for collectives (`exposed`) and those that run under compute
#'   (`hidden`). Each collective moves the share of its bytes its algorithm
#'   moves (a ring all-reduce 2(n-1)/n, an all-gather, reduce-scatter or
#'   all-to-all (n-1)/n, a collective-permute all of them) at the bus
#'   bandwidth of the links its device groups span, with a latency per ring
#'   step. A GPU compile says which collectives run beside compute: its
#'   schedule starts them early and waits for them late, and the time walks
#'   that schedule. A CPU compile has no such schedule: there the gathers of
#'   weights split over devices and the reductions of their gradients run
#'   under the step's compute, as a GPU's scheduler places them, up to the
#'   compute's time, and other collectives (activations inside a block)
#'   are waited for (`overlap` says which);
#' * `total`: the step's time, compute and what is waited for;
#' * and what they come from: `compute_dtype`, `flop_rate` (matrix
#'   products'), `accumulation_steps`.
#'
#' These are a model's figures. Checked against published, measured
#' training runs (MaxText on 8 to 128 H100s, torchtitan on 64 A100s), the
#' modeled step time of the same configurations was within 0.8 to 1.25
#' times the measured one for every run but one, with the presets' figures
#' unchanged between runs (the package's benchmarks list each).
#'
#' Which node a device sits in: the mesh's devices, in the order of their
#' ids, fill the first node, then the next. So the mesh's shape and
#' device order decide which mesh axis crosses nodes: on 4 nodes of 8, a
#' mesh `c(data = 4, model = 8)` keeps `"model"` inside each node. A
#' topology with another number of devices than the mesh is an error of
#' class `kerasmesh_error_topology_devices`; one without peak FLOP/s for
#' the model's compute dtype, of class `kerasmesh_error_topology`.
#'
#' @section Which compiler:
#' `compiled_for` says what compiled the step. With a topology of GPUs and
#' XLA's GPU compiler installed (`install_kerasmesh(gpu_compiler = TRUE)`,
#' or `reticulate::py_require("jax[cuda12]==0.10.2")` before Python
#' starts; several GB), the step is compiled by XLA's GPU compiler for
#' that GPU and node layout, without GPUs, as it would be compiled for
#' them: memory, collectives and their schedule are the GPU's (for example
#' `"H100 SXM 80GB (XLA GPU, deviceless)"`). A topology of hardware of
#' your own compiles as the nearest preset, its own memory and memory
#' bandwidth written in, and says so. Without the GPU compiler, XLA's CPU
#' compiler stands in (`"CPU (XLA CPU)"`), with the corrections below, and
#' kerasmesh says once per session how to install it. On a machine with
#' GPUs, the step is compiled for them.
#'
#' @section What the compile says:
#' * `bfloat16`: XLA's CPU backend computes bfloat16 in float32, which
#'   would count a `mixed_bfloat16` model's activations and collectives
#'   at 4 bytes where GPUs and TPUs keep 2. On CPU, kerasmesh compiles a
#'   step's bfloat16 as float16 (the same size, which the CPU backend
#'   keeps), so the figures are a GPU's: `"float16"`. `"absent"`: the
#'   step has no bfloat16; `"native"`: a GPU compiler compiled it;
#'   `"float32"`: the CPU's widened figures (where the retyped step could
#'   not be compiled), said in the print-out.
#' * `attention`: on a GPU, Keras's `ops.dot_product_attention` runs
#'   bfloat16 and float16 attention fused (cuDNN's flash attention), never
#'   keeping the scores of every query against every key. Compiled for a
#'   GPU without one, the step calls cuDNN's attention as Keras would on
#'   the GPU: `"cudnn"`. XLA's CPU backend has no fused attention and
#'   keeps the scores whole, in float32: on CPU, and on a GPU compile whose
#'   layout XLA's partitioner refuses to give cuDNN, kerasmesh costs such
#'   attention computed in blocks of 512 queries, each recomputed in the
#'   backward pass: the same result, one block's scores in memory, as a
#'   fused kernel: `"blocks"`. `"written"`: attention costed as the model
#'   computes it (in float32, shorter than two blocks, with a bias or soft
#'   cap, or written out as its own operations).
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
  axes <- as.character(unlist(comm$axes))
  list(
    compute = as.numeric(desc$compute),
    recompute = as.numeric(desc$recompute),
    parts = vapply(desc$parts, as.numeric, 1),
    communication = data.frame(
      axes = axes, exposed = as.numeric(unlist(comm$exposed)),
      hidden = as.numeric(unlist(comm$hidden)), stringsAsFactors = FALSE
    ),
    overlap = desc$overlap,
    total = as.numeric(desc$total),
    compute_dtype = desc$compute_dtype,
    flop_rate = as.numeric(desc$flop_rate),
    accumulation_steps = as.integer(desc$accumulation_steps)
  )
}

new_compiled_for <- function(desc) {
  if (is.null(desc)) {
    return(list(label = NA_character_, kind = NA_character_,
                preset = NA_character_, nearest = FALSE,
                compiler_missing = FALSE))
  }
  list(label = desc$label, kind = desc$kind,
       preset = desc$preset %||% NA_character_,
       nearest = isTRUE(desc$nearest),
       compiler_missing = isTRUE(desc$compiler_missing))
}

# Once per session: a cost on a GPU topology compiled by the CPU compiler.
inform_gpu_compiler <- function(compiled_for) {
  if (!isTRUE(compiled_for$compiler_missing)) {
    return(invisible())
  }
  cli::cli_inform(
    c(i = "XLA's CPU compiler stood in for the topology's GPUs: XLA's GPU
           compiler is not installed.",
      " " = "Install it with {.code install_kerasmesh(gpu_compiler = TRUE)}
             (several GB) to compile for the GPUs, without them."),
    class = c("kerasmesh_message_gpu_compiler", "kerasmesh_message"),
    .frequency = "once", .frequency_id = "kerasmesh_gpu_compiler"
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
    if (identical(x$attention, "blocks")) {
      "attention computed in blocks, as GPUs' fused attention: no scores kept"
    },
    if (identical(x$attention, "cudnn")) {
      "attention as cuDNN's fused attention, as Keras runs it on GPUs"
    },
    if (n > 0) {
      sprintf("XLA replicates %s in full to reshard %s (see $reshardings)",
              count_text(n, "tensor"), if (n == 1) "it" else "them")
    }
  )
}
# The lines of a cost's modeled time: the total per global batch, then
# its parts (compute by what bounds it, recomputation, and per set of mesh
# axes the collectives waited for and those hidden under compute).
format_cost_time <- function(time, topology, compiled_for = NULL) {
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
  parts <- time$parts
  scale <- if (sum(parts) > 0) time$compute / sum(parts) else 0
  axes <- ifelse(comm$axes == "", "no axis", comm$axes)
  labels <- c(
    sprintf("matrix products (%s at %s)", time$compute_dtype,
            format_flop_rate(time$flop_rate)),
    "attention", "bound by memory",
    if (time$recompute > 0) "recomputing activations",
    sprintf("waiting for collectives over %s", axes)
  )
  seconds <- c(scale * parts[c("matmul", "attention", "memory")],
               if (time$recompute > 0) time$recompute, comm$exposed)
  # A step without attention (an MLP) shows no line for it.
  shown <- !(labels == "attention" & seconds == 0)
  labels <- labels[shown]
  seconds <- seconds[shown]
  hidden <- comm$hidden > 0
  c(
    sprintf("Time per global batch: %s%s", format_seconds(time$total), on),
    if (!is.null(compiled_for) && !is.na(compiled_for$label)) {
      sprintf("  compiled for %s", compiled_for$label)
    },
    if (steps > 1) {
      sprintf("  (%s micro-batches, each the step compiled here)",
              format_whole(steps))
    },
    format_table(data.frame(part = labels, seconds = format_seconds(seconds),
                            stringsAsFactors = FALSE),
                 header = NULL, right = 2),
    if (any(hidden)) {
      strwrap(paste0(
        "Under compute: ", paste(sprintf(
          "%s over %s", format_seconds(comm$hidden[hidden]), axes[hidden]
        ), collapse = ", "),
        if (identical(time$overlap, "class")) {
          " (weights' collectives, as a GPU schedules them)"
        }
      ), width = 78, initial = "  ", prefix = "    ")
    }
  )
}
