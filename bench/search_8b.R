# Benchmark: search_layout() on the Llama-3-8B-shaped keras-hub backbone.
#
# Llama3Backbone with hidden 4096, 32 query / 8 key-value heads,
# intermediate 14336, vocabulary 128256, bfloat16, cut to BLOCKS blocks
# (default 2), batch 8 x 2048 tokens, SGD, on the 2 x 4 mesh ("batch" x
# "model") of 8 simulated CPU devices. In the same run, compare_layouts()
# costs keras-hub's own get_layout_map() and a hand-written
# tensor-parallel map (heads and MLP columns on "model", weights replicated
# over "batch"); the search starts from keras-hub's map, with the
# tensor-parallel map's memory as its budget and TIMEOUT seconds (default
# 120).
#
#   Rscript bench/search_8b.R [BLOCKS] [TIMEOUT] [SIZE]
#
# SIZE "70b" makes it the Llama-3-70B-sized backbone of bench/hub_70b_*
# (hidden 8192, 64 query / 8 key-value heads, intermediate 28672) on a 4 x 8
# mesh of 32 simulated devices, batch 32 x 2048 tokens.
#
# Prints "name value" lines: the search's time and the R process's peak
# RSS, and the found, keras-hub and tensor-parallel maps' verified memory
# and traffic per device.

source(file.path(dirname(sub("^--file=", "", grep(
  "^--file=", commandArgs(), value = TRUE
))), "common.R"))

args <- commandArgs(trailingOnly = TRUE)
blocks <- if (length(args) >= 1) as.numeric(args[[1]]) else 2
timeout <- if (length(args) >= 2) as.numeric(args[[2]]) else 120
size <- if (length(args) >= 3) args[[3]] else "8b"
config <- switch(size,
  "8b" = list(devices = 8, mesh = c(batch = 2, model = 4), heads = 32L,
              hidden = 4096L, intermediate = 14336L, batch = 8),
  "70b" = list(devices = 32, mesh = c(batch = 4, model = 8), heads = 64L,
               hidden = 8192L, intermediate = 28672L, batch = 32),
  stop("SIZE must be 8b or 70b")
)
simulate_devices(config$devices)
mesh <- device_mesh(config$mesh)
hub <- reticulate::import("keras_hub")
build <- function(n) {
  hub$models$Llama3Backbone(
    vocabulary_size = 128256L, num_layers = as.integer(n),
    num_query_heads = config$heads, num_key_value_heads = 8L,
    hidden_dim = config$hidden, intermediate_dim = config$intermediate,
    dtype = "bfloat16"
  )
}
full <- function() build(blocks)
shapes <- list(token_ids = 2048, padding_mask = 2048)
hub_map <- hub$models$Llama3Backbone$get_layout_map(reticulate::r_to_py(mesh))
tp <- layout_map(
  mesh,
  "token_embedding/embeddings" = c("model", NA),
  ".*self_attention.*(query|key|value).kernel" = c(NA, "model", NA),
  ".*attention_output.kernel" = c("model", NA, NA),
  ".*feedforward_(intermediate|gate)_dense.kernel" = c(NA, "model"),
  ".*feedforward_output_dense.kernel" = c("model", NA)
)
cmp <- compare_layouts(
  full, list(keras_hub = model_parallel(as_layout_map(hub_map), "batch"),
             tensor_parallel = model_parallel(tp, "batch")),
  batch_size = config$batch, optimizer = "sgd", input_shapes = shapes,
  timeout = 1200
)
print(cmp)
xla_total <- function(cost) cost$xla[["total"]]
costs <- attr(cmp, "costs")
budget <- xla_total(costs$tensor_parallel)

start <- Sys.time()
found <- search_layout(
  if (blocks > 2) build else full, mesh, batch_size = config$batch,
  optimizer = "sgd",
  input_shapes = shapes, memory = budget, start = hub_map,
  blocks = if (blocks > 2) blocks, timeout = timeout
)
elapsed <- as.numeric(Sys.time() - start, units = "secs")
print(found)

line <- function(name, value) cat(sprintf("%s %.6g\n", name, value))
traffic <- function(cost) sum(cost$collectives$bytes)
line("seconds", elapsed)
line("peak_rss_gib", peak_rss() / 2^30)
line("compiles", found$compiles)
line("found_memory_gb", xla_total(found$cost) / 1e9)
line("found_traffic_gb", traffic(found$cost) / 1e9)
line("hub_memory_gb", xla_total(costs$keras_hub) / 1e9)
line("hub_traffic_gb", traffic(costs$keras_hub) / 1e9)
line("tp_memory_gb", budget / 1e9)
line("tp_traffic_gb", traffic(costs$tensor_parallel) / 1e9)
