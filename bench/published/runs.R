# Published, measured training runs kerasmesh's modeled step time is checked
# against (sourced by bench/published/run.R and cost_run.R). Each run: where
# it is published, what was measured, and the same configuration as
# kerasmesh costs it.
#
# Models are keras-hub causal language models (the backbone, its output
# projection to the vocabulary, and the cross-entropy of the next token)
# of the run's shape, in mixed bfloat16 (float32 weights and Adam state,
# bfloat16 compute), as the runs train (bfloat16 compute, float32 master
# weights and optimizer state). Layouts are fully sharded data parallelism
# as the runs use it: every weight split over the one data axis of all the
# devices, and activations split by the batch (MaxText's logical axis
# rules, torchtitan's FSDP2): `fsdp_rules()`.

llama <- function(vocabulary, hidden, heads, kv_heads, intermediate, blocks,
                  backbone = "LlamaBackbone") {
  list(backbone = backbone, blocks = blocks, args = list(
    vocabulary_size = vocabulary, hidden_dim = hidden,
    num_query_heads = heads, num_key_value_heads = kv_heads,
    intermediate_dim = intermediate
  ))
}
llama2_7b <- llama(32000L, 4096L, 32L, 32L, 11008L, 32L)
llama2_70b <- llama(32000L, 8192L, 64L, 8L, 28672L, 80L)
llama3_8b <- llama(128256L, 4096L, 32L, 8L, 14336L, 32L, "Llama3Backbone")
llama3_70b <- llama(128256L, 8192L, 64L, 8L, 28672L, 80L, "Llama3Backbone")

published_runs <- list(
  maxtext_llama2_7b_b16 = list(
    source = paste("NVIDIA/JAX-Toolbox rosetta/projects/maxtext/README.md",
                   "(24.04 container)"),
    what = "MaxText Llama-2-7B, 1 node of 8 H100, FSDP 8",
    model = llama2_7b, gpu = "h100-sxm-80gb", nodes = 1L, batch = 16L,
    sequence = 4096L, remat = "minimal_flash", lever = "save_matmuls",
    measured = 0.721, fit = TRUE
  ),
  maxtext_llama2_7b_b32 = list(
    source = paste("AI-Hypercomputer/maxtext MaxText/configs/a3/llama_2_7b/",
                   "(492 TFLOP/s a chip in MaxText's count of the step)"),
    what = "MaxText Llama-2-7B, 1 node of 8 H100, FSDP 8",
    model = llama2_7b, gpu = "h100-sxm-80gb", nodes = 1L, batch = 32L,
    sequence = 4096L, remat = "minimal_flash", lever = "save_matmuls",
    measured = 1.45, fit = TRUE
  ),
  maxtext_llama2_70b_64 = list(
    source = paste("NVIDIA/dgxc-benchmarking maxtext/README_70b.md",
                   "(GSW 25.01, BF16, 64x H100)"),
    what = "MaxText Llama-2-70B, 8 nodes of 8 H100, FSDP 64",
    model = llama2_70b, gpu = "h100-sxm-80gb", nodes = 8L, batch = 128L,
    sequence = 4096L, remat = "save_qkv_proj", lever = "full",
    measured = 6.999, fit = TRUE
  ),
  maxtext_llama3_70b_128 = list(
    source = "NVIDIA/dgxc-benchmarking v25.02 maxtext/README_70b.md",
    what = "MaxText Llama-3-70B, 16 nodes of 8 H100, FSDP 128",
    model = llama3_70b, gpu = "h100-sxm-80gb", nodes = 16L, batch = 256L,
    sequence = 8192L, remat = "save_qkv_proj", lever = "full",
    measured = 15.563, fit = TRUE
  ),
  torchtitan_llama3_8b_h100 = list(
    source = paste("pytorch/torchtitan docs/performance.md, Table 1",
                   "(5,762 tokens/s/GPU, eager)"),
    what = paste("torchtitan Llama-3.1-8B, 1 node of 8 H100 96 GB",
                 "(HBM2e, 2.4 TB/s, 500 W), FSDP 8"),
    model = llama3_8b, gpu = "h100-sxm-80gb",
    figures = list(memory = "96GB", memory_bandwidth = "2.4TB/s"),
    nodes = 1L, batch = 16L, sequence = 8192L, remat = "selective (op)",
    lever = "save_matmuls", measured = 16 * 8192 / (8 * 5762), fit = TRUE
  ),
  torchtitan_llama3_8b_a100 = list(
    source = paste("pytorch/torchtitan docs/performance.md, Llama 3 on 64",
                   "A100 (2,973 tokens/s/GPU)"),
    what = "torchtitan Llama-3-8B, 8 nodes of 8 A100 80 GB, FSDP 64",
    model = llama3_8b, gpu = "a100-sxm-80gb", nodes = 8L, batch = 64L,
    sequence = 8192L, remat = "selective (op)", lever = "save_matmuls",
    measured = 8192 / 2973, fit = TRUE
  ),
  torchtitan_llama3_70b_a100 = list(
    source = paste("pytorch/torchtitan docs/performance.md, Llama 3 on 64",
                   "A100 (331 tokens/s/GPU)"),
    what = "torchtitan Llama-3-70B, 8 nodes of 8 A100 80 GB, FSDP 64",
    model = llama3_70b, gpu = "a100-sxm-80gb", nodes = 8L, batch = 64L,
    sequence = 8192L, remat = "full", lever = "full",
    measured = 8192 / 331, fit = TRUE
  )
)

# Fully sharded data parallelism on a (devices x 1) mesh: each block's
# weights split over "data" on their embedding ("hidden") dimension, the
# embedding tables on their vocabulary dimension; the blocks' outputs and
# their attention's projections split by the batch, as MaxText's rules lay
# activations out.
fsdp_rules <- function() {
  list(
    "token_embedding/embeddings" = c("data", NA),
    "token_embedding/reverse_embeddings" = c(NA, "data"),
    ".*self_attention.*(query|key|value).kernel" = c("data", NA, NA),
    ".*attention_output.kernel" = c(NA, NA, "data"),
    ".*feedforward_(intermediate|gate)_dense.kernel" = c("data", NA),
    ".*feedforward_output_dense.kernel" = c(NA, "data"),
    ".*transformer_layer_\\d+/output" = c("data", NA, NA),
    ".*self_attention/(query|key|value)/output" = c("data", NA, NA, NA)
  )
}
