#' Rematerialize a model's blocks for training
#'
#' Makes each block of `model` recompute in the backward pass what it did
#' not keep from the forward pass, so that training holds less in memory
#' for the price of more operations: the memory lever a search or
#' [layout_cost()] weighs with `remat`. The model is changed in place (its
#' block layers, not their classes: Keras and keras-hub are untouched) and
#' trains as before, with the same losses and gradients.
#'
#' @section Blocks:
#' A block is a repeated unit of the model:
#' * the layers named in `layers`, found by name anywhere in the model;
#' * else, the layers an earlier `set_remat()` chose;
#' * else, a keras-hub backbone's transformer layers
#'   (`backbone$transformer_layers`, also those of a task's backbone, such
#'   as a causal language model's);
#' * else, the model's own layers that hold layers of their own and whose
#'   class appears at least twice: nested `Sequential` models used as
#'   blocks, or a custom block layer used several times.
#'
#' A model with none of them has no blocks: rematerializing it is an error
#' of class `kerasmesh_error_remat_blocks` (name its layers with `layers`).
#'
#' @section How it works:
#' Each block's `call()` runs under `jax.checkpoint` inside Keras's
#' stateless training step. Only array arguments (the block's inputs, its
#' masks, its weights' current values) become inputs of the checkpoint;
#' strings, `None`, flags such as `training` and other Python values stay
#' fixed, which is why this works on keras-hub's transformer layers where
#' Keras's own `keras.RematScope` does not. Updated state (the seeds of
#' dropout layers) and losses the block adds are passed on. Outside a
#' traced step (an eager call) a block runs as before. JAX only.
#'
#' Call it before `fit()`; after changing the choice of a model that has
#' trained, `compile()` it again so that Keras traces its step anew.
#'
#' @param model A built Keras model.
#' @param remat What each block recomputes in the backward pass:
#'   * `"full"`: everything; a block keeps only its inputs and runs its
#'     forward pass again in the backward pass;
#'   * `"save_matmuls"`: a block keeps the results of its matrix products
#'     with weights (its projections) and recomputes the rest:
#'     normalizations, activations, attention scores and softmax (JAX's
#'     `dots_with_no_batch_dims_saveable` policy);
#'   * `"none"`: nothing; removes what an earlier `set_remat()` applied;
#'
#'   or one of them per block, in block order, such as
#'   `rep(c("full", "save_matmuls"), c(4, 28))` or
#'   `rep(c("save_matmuls", "none"), c(14, 14))` (what [search_layout()]
#'   finds when recomputing on every block costs more than memory needs:
#'   the first blocks' activations are kept longest, so those are the ones
#'   to recompute).
#' @param layers `NULL` to find the blocks (see Blocks), or the names of the
#'   layers to rematerialize as blocks.
#' @param ... Must be empty.
#' @return `model`, invisibly, changed in place.
#' @seealso [layout_cost()] and [compare_layouts()], whose `remat` costs a
#'   choice without changing the model.
#' @export
#' @examplesIf keras_available()
#' simulate_devices(8)
#' library(reticulate, include.only = "import")
#' keras <- import("keras")
#' # Three residual blocks, each a small Sequential model.
#' inputs <- keras$Input(shape = list(16L))
#' x <- inputs
#' for (i in 1:3) {
#'   block <- keras$Sequential(list(
#'     keras$layers$Dense(64L, activation = "gelu"),
#'     keras$layers$Dense(16L)
#'   ), name = paste0("block_", i))
#'   x <- keras$layers$Add()(list(x, block(x)))
#' }
#' model <- keras$Model(inputs, keras$layers$Dense(1L)(x))
#' set_remat(model, "full")
#' model$compile(optimizer = "adam", loss = "mse")
#' history <- model$fit(numpy_array(matrix(rnorm(64 * 16), 64)),
#'                      numpy_array(matrix(rnorm(64), 64)),
#'                      epochs = 2L, batch_size = 16L, verbose = 0L)
#' set_remat(model, "none")
set_remat <- function(model, remat = "full", layers = NULL, ...) {
  check_call()
  check_python_object(model, "a Keras model", kind = kinds$model)
  remat <- check_remat(remat)
  if (!is.null(layers) && (!is.character(layers) || length(layers) == 0 ||
                             anyNA(layers) || any(!nzchar(layers)))) {
    stop_input_type(layers, "`NULL` or names of layers", show_value = FALSE,
                    kind = kinds$remat_blocks)
  }
  shim_call("remat.set_remat", model = model, remat = remat,
            layers = if (is.null(layers)) NULL else as.list(layers))
  invisible(model)
}

# The rematerialization choices, as the shim's remat/choice.py has them.
remat_choices <- c("none", "save_matmuls", "full")

# `remat`: one of remat_choices, or one of them per block (or NULL where
# `allow_null`). Returned as the shim takes it: one choice as a string,
# one per block as a list.
check_remat <- function(remat, allow_null = FALSE,
                        arg = rlang::caller_arg(remat),
                        call = rlang::caller_env()) {
  if (allow_null && is.null(remat)) {
    return(NULL)
  }
  strings <- is.character(remat) && length(remat) >= 1 && !anyNA(remat)
  if (strings && all(remat %in% remat_choices)) {
    return(if (length(remat) == 1) remat else as.list(remat))
  }
  way_out <- '"full" recomputes each block in the backward pass;
              "save_matmuls" keeps its matrix products.'
  if (strings) {
    bad <- setdiff(remat, remat_choices) # nolint: object_usage_linter. cli.
    kerasmesh_abort(
      c("{.arg {arg}} must be one of {.or {.val {remat_choices}}} (or one
         of them per block).",
        x = "Received {.val {bad}}.", i = way_out),
      kind = kinds$remat, call = call
    )
  }
  stop_input_type(remat, paste0(if (allow_null) "`NULL` or ",
                                "one of {.or {.val {remat_choices}}} (or one ",
                                "of them per block)"),
                  way_out = way_out, kind = kinds$remat, arg = arg,
                  call = call)
}

# The shim's remat as R has it: one choice, or a character vector of one
# per block ("none" when absent).
as_remat <- function(remat) {
  as.character(unlist(remat %||% "none"))
}

# A remat's runs over the blocks: `values` (quoted) and `lengths`.
remat_runs <- function(remat, quote = TRUE) {
  runs <- rle(as_remat(remat))
  list(values = if (quote) encodeString(runs$values, quote = '"') else
         runs$values,
       lengths = runs$lengths)
}

# A remat in words: '"full"', or its runs over the blocks
# ('"full" x4, "save_matmuls" x28'); unquoted for a table's column.
remat_label <- function(remat, quote = TRUE) {
  runs <- remat_runs(remat, quote)
  if (length(as_remat(remat)) == 1) {
    return(runs$values)
  }
  paste(sprintf("%s x%d", runs$values, runs$lengths), collapse = ", ")
}
