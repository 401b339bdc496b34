# keras-hub backbones from small configs (nothing downloaded). keras-hub is
# a test dependency (tools/requirements-test.txt): under `make check` its
# absence is a failure, elsewhere a skip.
skip_if_no_keras_hub <- function() {
  skip_if_no_keras()
  if (reticulate::py_module_available("keras_hub")) {
    return(invisible(TRUE))
  }
  if (identical(Sys.getenv("KERASMESH_REQUIRE_PYTHON"), "true")) {
    stop("keras-hub is required but was not found: run `make setup`.")
  }
  testthat::skip("keras-hub is not available.")
}

hub_families <- list(
  gemma = list(class = "GemmaBackbone", extra = list(head_dim = 8L),
               listing = "decoder_block_{0..2}/attention/{key,value}/kernel"),
  llama = list(class = "LlamaBackbone", extra = list(),
               listing =
                 "transformer_layer_{0..2}/self_attention/{key,value}/kernel"),
  qwen2 = list(class = "Qwen2Backbone", extra = list(),
               listing =
                 "transformer_layer_{0..2}/self_attention/{key,value}/kernel")
)

hub_class <- function(family) {
  hub <- reticulate::import("keras_hub")
  hub$models[[hub_families[[family]]$class]]
}

# A builder for a 3-block backbone of `family` with `kv_heads` key/value
# heads.
hub_builder <- function(family, kv_heads, num_layers = 3L) {
  cls <- hub_class(family)
  config <- c(list(vocabulary_size = 256L, num_layers = num_layers,
                   num_query_heads = 8L, num_key_value_heads = kv_heads,
                   hidden_dim = 32L, intermediate_dim = 64L),
              hub_families[[family]]$extra)
  function() do.call(cls, config)
}

hub_mesh <- function() {
  kerasmesh::device_mesh(c(batch = 2, model = 4))
}

# The backbone's own get_layout_map() on `mesh`: a Keras LayoutMap.
hub_layout_map <- function(family, mesh = hub_mesh()) {
  hub_class(family)$get_layout_map(reticulate::r_to_py(mesh))
}

# A builder for a tiny keras-hub task: a 2-block Gemma CausalLM (no
# preprocessor), which compiles itself with its own Adam when made, with
# LoRA (rank 4) on its backbone's query and value kernels.
hub_causal_lm_builder <- function(lora = TRUE) {
  hub <- reticulate::import("keras_hub")
  function() {
    backbone <- hub$models$GemmaBackbone(
      vocabulary_size = 256L, num_layers = 2L, num_query_heads = 4L,
      num_key_value_heads = 4L, hidden_dim = 32L, intermediate_dim = 64L,
      head_dim = 8L
    )
    task <- hub$models$GemmaCausalLM(backbone = backbone,
                                     preprocessor = NULL)
    if (lora) task$backbone$enable_lora(rank = 4L)
    task
  }
}

# The CausalLM's inputs, without the batch dimension: 16 tokens.
hub_task_inputs <- list(token_ids = 16, padding_mask = 16)
