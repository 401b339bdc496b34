"""Models and a training step for the rematerialization tests.

`residual_blocks()` is a plain Keras model whose blocks are repeated
`Sequential` models; `hub_backbone(family)` a tiny keras-hub backbone;
`train_step()` runs one stateless training step (the forward pass with
`stateless_call(training=True)`, the gradient, as Keras's JAX trainer
does) under a remat choice, and reports its loss, gradients, updated
non-trainable state and XLA's temporaries.
"""

import numpy as np

import keras

from kerasmesh.cost.target import CPU, Target
from kerasmesh.remat.choice import remat_scope

# kerasmesh's XLA options for CPU compiles (`target.Target`).
CPU_OPTIONS = Target(CPU, "CPU (XLA CPU)").compile_options()

HUB = {
    "llama": ("Llama3Backbone", {}),
    "gemma": ("GemmaBackbone", {"head_dim": 8}),
    "qwen2": ("Qwen2Backbone", {}),
    "mistral": ("MistralBackbone", {}),
}


def residual_blocks(n_blocks=3, width=32, hidden=128, dropout=0.0,
                    regularize=False):
    """x + block(x), `n_blocks` times, each block a Sequential of Dense
    (gelu), Dropout and Dense, then a Dense head."""
    keras.utils.set_random_seed(3)
    inputs = keras.Input((width,), name="x")
    x = inputs
    for i in range(n_blocks):
        block = keras.Sequential([
            keras.layers.Dense(hidden, activation="gelu", name=f"up_{i}",
                               activity_regularizer=keras.regularizers.L2(
                                   1e-3) if regularize else None),
            keras.layers.Dropout(dropout, name=f"drop_{i}"),
            keras.layers.Dense(width, name=f"down_{i}"),
        ], name=f"block_{i}")
        x = keras.layers.Add(name=f"add_{i}")([x, block(x)])
    outputs = keras.layers.Dense(4, name="head")(x)
    return keras.Model(inputs, outputs, name="residual")


def hub_backbone(family, num_layers=3, dropout=None):
    """A tiny keras-hub backbone of `family` (nothing downloaded)."""
    import keras_hub

    cls_name, extra = HUB[family]
    cls = getattr(keras_hub.models, cls_name)
    keras.utils.set_random_seed(5)
    config = dict(vocabulary_size=256, num_layers=num_layers,
                  num_query_heads=8, num_key_value_heads=2, hidden_dim=32,
                  intermediate_dim=64, **extra)
    if dropout is not None:
        config["dropout"] = dropout
    return cls(**config)


def hub_inputs(batch=4, length=64):
    rng = np.random.default_rng(0)
    return {"token_ids": rng.integers(0, 256, (batch, length), "int32"),
            "padding_mask": np.ones((batch, length), "int32")}


def train_step(model, x, remat):
    """One training step of `model` on `x` with `remat` applied: (loss,
    gradients, non-trainable values after, XLA's temp bytes)."""
    import jax
    import jax.numpy as jnp

    t = [v.value for v in model.trainable_variables]
    n = [v.value for v in model.non_trainable_variables]

    def step(t, n, x):
        def loss(t, n):
            y, n = model.stateless_call(t, n, x, training=True)
            y = y if not isinstance(y, dict) else y["sequence_output"]
            return jnp.mean(jnp.square(y.astype("float32"))), n

        (value, n), grads = jax.value_and_grad(loss, has_aux=True)(t, n)
        return value, grads, n

    with remat_scope(model, remat):
        # A new function each time: jax.jit caches traces by function.
        lowered = jax.jit(lambda *a: step(*a)).lower(t, n, x)
    compiled = lowered.compile(compiler_options=CPU_OPTIONS)
    value, grads, n = compiled(t, n, x)
    return (float(value), [np.asarray(g) for g in grads],
            [np.asarray(v) for v in n],
            compiled.memory_analysis().temp_size_in_bytes)
