# The models, machines and hand-written configurations of
# bench/search_topology.R (sourced by it).
#
# Models: keras-hub backbones in mixed bfloat16 (float32 weights and Adam
# state, bfloat16 compute), built shape-only, sequences of 4096 tokens.
# The backbone's output (the last hidden states) is differentiated through
# kerasmesh's stand-in loss, so no language-model head (logits) is costed.

llama_args <- function(heads, hidden, intermediate) {
  list(vocabulary_size = 128256L, num_query_heads = heads,
       num_key_value_heads = 8L, hidden_dim = hidden,
       intermediate_dim = intermediate)
}

topology_models <- list(
  "8b" = list(
    label = "Llama-3-8B-shaped, 32 blocks, batch 64 x 4096, 1 node of 8 H100",
    backbone = "Llama3Backbone", blocks = 32L, batch = 64L, nodes = 1L,
    args = llama_args(32L, 4096L, 14336L), family = "llama"
  ),
  "70b" = list(
    label = "Llama-3-70B-sized, 80 blocks, batch 128 x 4096, 4 nodes of 8 H100",
    backbone = "Llama3Backbone", blocks = 80L, batch = 128L, nodes = 4L,
    args = llama_args(64L, 8192L, 28672L), family = "llama"
  ),
  "gemma" = list(
    label = "Gemma-7B-shaped, 28 blocks, batch 64 x 4096, 1 node of 8 H100",
    backbone = "GemmaBackbone", blocks = 28L, batch = 64L, nodes = 1L,
    args = list(vocabulary_size = 256000L, num_query_heads = 16L,
                num_key_value_heads = 16L, hidden_dim = 3072L,
                intermediate_dim = 49152L, head_dim = 256L),
    family = "gemma"
  )
)

# build(d): the backbone with d blocks, mixed bfloat16.
topology_builder <- function(model) {
  hub <- reticulate::import("keras_hub")
  force(model)
  function(blocks = model$blocks) {
    do.call(hub$models[[model$backbone]],
            c(model$args, num_layers = as.integer(blocks),
              dtype = "mixed_bfloat16"))
  }
}

# MaxText-style: every weight (and so its Adam state) split over the one
# data axis, the batch over it too: FSDP on a (devices x 1) mesh. Blocks'
# weights on their embedding ("hidden") dimension; the embedding tables on
# their vocabulary dimension: split on the hidden dimension, the embedding
# lookup's output is split over the batch's own axis twice, and XLA moves
# about 10 times the bytes (the 8B at k = 4: 1.72 TB per device per batch
# against 0.17 TB; the 70B at k = 1: 626 s per batch against 33.8 s).
fsdp_rules <- function(family, axis = "data") {
  if (family == "llama") {
    list(
      "token_embedding/embeddings" = c(axis, NA),
      "token_embedding/reverse_embeddings" = c(NA, axis),
      ".*self_attention.*(query|key|value).kernel" = c(axis, NA, NA),
      ".*attention_output.kernel" = c(NA, NA, axis),
      ".*feedforward_(intermediate|gate)_dense.kernel" = c(axis, NA),
      ".*feedforward_output_dense.kernel" = c(NA, axis)
    )
  } else {
    list(
      "token_embedding/embeddings" = c(axis, NA),
      ".*attention.*(query|key|value).kernel" = c(NA, axis, NA),
      ".*attention_output.kernel" = c(NA, NA, axis),
      ".*ffw_gating(_2)?.kernel" = c(axis, NA),
      ".*ffw_linear.kernel" = c(NA, axis)
    )
  }
}

# Megatron-style tensor parallelism over "model": attention heads and MLP
# columns split (the output projections by rows), the embeddings by
# vocabulary; weights replicated over "data".
megatron_rules <- function(family) {
  if (family == "llama") {
    list(
      "token_embedding/embeddings" = c("model", NA),
      "token_embedding/reverse_embeddings" = c(NA, "model"),
      ".*self_attention.*(query|key|value).kernel" = c(NA, "model", NA),
      ".*attention_output.kernel" = c("model", NA, NA),
      ".*feedforward_(intermediate|gate)_dense.kernel" = c(NA, "model"),
      ".*feedforward_output_dense.kernel" = c("model", NA)
    )
  } else {
    list(
      "token_embedding/embeddings" = c("model", NA),
      ".*attention.*(query|key|value).kernel" = c("model", NA, NA),
      ".*attention_output.kernel" = c("model", NA, NA),
      ".*ffw_gating(_2)?.kernel" = c(NA, "model"),
      ".*ffw_linear.kernel" = c("model", NA)
    )
  }
}

# The hand configurations of a model: name -> mesh (data x model, "model"
# inside a node), how its layout map is made, and a description.
hand_configs <- function(model) {
  devices <- 8L * model$nodes
  per_node <- 8L
  configs <- list(
    maxtext = list(
      mesh = c(data = devices, model = 1L), map = "fsdp",
      what = sprintf(paste("MaxText-style FSDP: weights and Adam state split",
                           "over all %d devices (%d x 1)"), devices, devices)
    ),
    megatron = list(
      mesh = c(data = devices / per_node, model = per_node), map = "megatron",
      what = sprintf(paste("Megatron-style: tensor parallel over the node's 8",
                           "(model), data parallel over %d (data)"),
                     devices / per_node)
    )
  )
  if (model$nodes == 1) {
    configs$megatron_dp <- list(
      mesh = c(data = 2L, model = 4L), map = "megatron",
      what = paste("Megatron-style: tensor parallel over 4 (model) x data",
                   "parallel over 2")
    )
  }
  configs$hub <- list(
    mesh = c(data = devices / per_node, model = per_node), map = "hub",
    what = sprintf("keras-hub's get_layout_map() on %d x 8 (data x model)",
                   devices / per_node)
  )
  if (model$nodes == 1 && model$family == "llama") {
    configs$hub_dp <- list(
      mesh = c(data = 2L, model = 4L), map = "hub",
      what = "keras-hub's get_layout_map() on 2 x 4 (data x model)"
    )
  }
  configs
}

# The model_parallel() distribution of a hand configuration.
hand_distribution <- function(config, model) {
  mesh <- device_mesh(config$mesh)
  lm <- switch(config$map,
    fsdp = do.call(layout_map, c(list(mesh), fsdp_rules(model$family))),
    megatron = do.call(layout_map,
                       c(list(mesh), megatron_rules(model$family))),
    hub = {
      hub <- reticulate::import("keras_hub")
      as_layout_map(hub$models[[model$backbone]]$get_layout_map(
        reticulate::r_to_py(mesh), model_parallel_dim_name = "model",
        data_parallel_dim_name = "data"
      ))
    }
  )
  model_parallel(lm, "data")
}

# Accumulation steps to try, fewest micro-batches first: the powers of two
# k whose micro-batch (batch / k) the data axis divides.
accumulation_tries <- function(batch, data) {
  k <- 2^(0:12)
  k[batch %% k == 0 & (batch / k) %% data == 0]
}
