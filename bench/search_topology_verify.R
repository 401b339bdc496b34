# The 70B search's proposal (bench/search_topology_70b.txt: not verified by
# the search, which ran out of time) compiled at full depth, with the code
# the search printed to reproduce it.
#
#   Rscript bench/search_topology_verify.R
here <- dirname(sub("^--file=", "", grep("^--file=", commandArgs(),
                                         value = TRUE)))
source(file.path(here, "common.R"))
source(file.path(here, "topology_configs.R"))
model <- topology_models[["70b"]]
simulate_devices(32)
build <- topology_builder(model)
mesh <- device_mesh(c(data = 32, model = 1))
lm <- layout_map(
  mesh,
  "(?:token_embedding/embeddings|transformer_layer_\\d+/feedforward_output_dense/kernel)" = c("data", NA), # nolint
  "(?:token_embedding/reverse_embeddings|transformer_layer_\\d+/(?:feedforward_intermediate_dense|feedforward_gate_dense)/kernel)" = c(NA, "data"), # nolint
  "transformer_layer_\\d+/self_attention/query/kernel" = c(NA, "data", NA),
  "transformer_layer_\\d+/self_attention/(?:attention_output|key|value)/kernel" = c("data", NA, NA) # nolint
)
topo <- device_topology("h100-sxm-80gb", nodes = 4)
started <- Sys.time()
cost <- layout_cost(
  function() build(80), model_parallel(lm, batch_dim_name = "data"),
  batch_size = 128, optimizer = "adam",
  input_shapes = list(token_ids = 4096, padding_mask = 4096), remat = "full",
  accumulation_steps = 4, topology = topo, timeout = 1800
)
print(cost)
cat(sprintf("verify_seconds %.6g\n", as.numeric(Sys.time() - started,
                                                units = "secs")))
cat(sprintf("verify_memory_gb %.6g\n", cost$need / 1e9))
cat(sprintf("verify_time_s %.6g\n", cost$time$total))
cat(sprintf("verify_peak_rss_gib %.6g\n", peak_rss() / 2^30))
