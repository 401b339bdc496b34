# Benchmark: search_layout() on keras-hub backbones.
#
#   Rscript bench/search_hub.R [BLOCKS] [TIMEOUT] [CONFIG]
#
# CONFIG (default "8b") is one of:
#   8b     Llama3Backbone, Llama-3-8B-shaped (hidden 4096, 32 query / 8
#          key-value heads, intermediate 14336, vocabulary 128256), batch
#          8 x 2048 tokens, on the 2 x 4 mesh ("batch" x "model") of 8
#          simulated CPU devices;
#   70b    Llama3Backbone, Llama-3-70B-sized (hidden 8192, 64 / 8 heads,
#          intermediate 28672), batch 32 x 2048, on a 4 x 8 mesh of 32
#          simulated devices;
#   gemma  GemmaBackbone, Gemma-7B-shaped (hidden 3072, 16 / 16 heads of
#          256, intermediate 49152, vocabulary 256000), batch 8 x 2048, 2 x 4;
#   qwen2  Qwen2Backbone, Qwen2-7B-shaped (hidden 3584, 28 / 4 heads,
#          intermediate 18944, vocabulary 152064, untied), batch 8 x 2048,
#          2 x 4.
# All in bfloat16 with SGD, cut to BLOCKS blocks (default 2). In the same run,
# compare_layouts() costs keras-hub's own get_layout_map() and, for the Llama
# configs, a hand-written tensor-parallel map (heads and MLP columns on
# "model", weights replicated over "batch"). The search starts from
# keras-hub's map, with the tensor-parallel map's memory as its budget
# (keras-hub's map's for Gemma and Qwen2) and TIMEOUT seconds (default 120).
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
llama <- function(heads, hidden, intermediate) {
  list(vocabulary_size = 128256L, num_query_heads = heads,
       num_key_value_heads = 8L, hidden_dim = hidden,
       intermediate_dim = intermediate)
}
config <- switch(size,
  "8b" = list(devices = 8, mesh = c(batch = 2, model = 4), batch = 8,
              backbone = "Llama3Backbone", args = llama(32L, 4096L, 14336L)),
  "70b" = list(devices = 32, mesh = c(batch = 4, model = 8), batch = 32,
               backbone = "Llama3Backbone", args = llama(64L, 8192L, 28672L)),
  "gemma" = list(devices = 8, mesh = c(batch = 2, model = 4), batch = 8,
                 backbone = "GemmaBackbone",
                 args = list(vocabulary_size = 256000L, num_query_heads = 16L,
                             num_key_value_heads = 16L, hidden_dim = 3072L,
                             intermediate_dim = 49152L, head_dim = 256L)),
  "qwen2" = list(devices = 8, mesh = c(batch = 2, model = 4), batch = 8,
                 backbone = "Qwen2Backbone",
                 args = list(vocabulary_size = 152064L, num_query_heads = 28L,
                             num_key_value_heads = 4L, hidden_dim = 3584L,
                             intermediate_dim = 18944L,
                             tie_word_embeddings = FALSE)),
  stop("CONFIG must be 8b, 70b, gemma or qwen2")
)
simulate_devices(config$devices)
mesh <- device_mesh(config$mesh)
hub <- reticulate::import("keras_hub")
build <- function(n) {
  do.call(hub$models[[config$backbone]],
          c(config$args, num_layers = as.integer(n), dtype = "bfloat16"))
}
full <- function() build(blocks)
shapes <- list(token_ids = 2048, padding_mask = 2048)
hub_map <- hub$models[[config$backbone]]$get_layout_map(
  reticulate::r_to_py(mesh)
)
layouts <- list(keras_hub = model_parallel(as_layout_map(hub_map), "batch"))
if (config$backbone == "Llama3Backbone") {
  layouts$tensor_parallel <- model_parallel(layout_map(
    mesh,
    "token_embedding/embeddings" = c("model", NA),
    ".*self_attention.*(query|key|value).kernel" = c(NA, "model", NA),
    ".*attention_output.kernel" = c("model", NA, NA),
    ".*feedforward_(intermediate|gate)_dense.kernel" = c(NA, "model"),
    ".*feedforward_output_dense.kernel" = c("model", NA)
  ), "batch")
}
cmp <- compare_layouts(full, layouts, batch_size = config$batch,
                       optimizer = "sgd", input_shapes = shapes,
                       timeout = 1800)
print(cmp)
xla_total <- function(cost) cost$xla[["total"]]
traffic <- function(cost) sum(cost$collectives$bytes)
costs <- attr(cmp, "costs")
budget <- xla_total(costs[[length(costs)]])

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
line("seconds", elapsed)
line("peak_rss_gib", peak_rss() / 2^30)
line("compiles", found$compiles)
line("pruned", found$pruned)
line("found_memory_gb", xla_total(found$cost) / 1e9)
line("found_traffic_gb", traffic(found$cost) / 1e9)
for (name in names(costs)) {
  prefix <- c(keras_hub = "hub", tensor_parallel = "tp")[[name]]
  line(paste0(prefix, "_memory_gb"), xla_total(costs[[name]]) / 1e9)
  line(paste0(prefix, "_traffic_gb"), traffic(costs[[name]]) / 1e9)
}
