"""Attention costed as GPUs run it: the blocked attention computes what
Keras's does, and a step traced for CPU figures keeps one block's scores.
"""

import jax
import jax.numpy as jnp
import keras
import numpy as np
import pytest

from kerasmesh.cost import attention
from kerasmesh.cost import layout_cost as cost
from kerasmesh.cost import target
from remat_models import hub_backbone
from test_cost_target import gpu_compiler_or_skip

LENGTH = 2 * attention.BLOCK


def qkv(heads=4, kv_heads=2, size=8, batch=2, seed=0):
    rng = np.random.default_rng(seed)
    shape = (batch, LENGTH)
    return (jnp.asarray(rng.normal(size=shape + (heads, size)), jnp.float32),
            jnp.asarray(rng.normal(size=shape + (kv_heads, size)),
                        jnp.float32),
            jnp.asarray(rng.normal(size=shape + (kv_heads, size)),
                        jnp.float32))


def padded_causal(batch=2):
    keep = np.random.default_rng(1).random((batch, 1, 1, LENGTH)) > 0.1
    return jnp.asarray(np.tril(np.ones((LENGTH, LENGTH), bool)) & keep)


@pytest.mark.parametrize("how", ["mask", "causal", "neither"])
def test_blocked_attention_has_the_values_and_gradients_of_keras(how):
    q, k, v = qkv()
    kw = {"mask": {"mask": padded_causal(), "scale": 0.3},
          "causal": {"is_causal": True}, "neither": {}}[how]

    def loss(fn):
        return lambda q, k, v: jnp.sum(jnp.sin(fn(q, k, v, **kw)))

    want = jax.value_and_grad(
        loss(keras.src.backend.jax.nn.dot_product_attention),
        argnums=(0, 1, 2))(q, k, v)
    got = jax.value_and_grad(loss(attention.blocked_attention),
                             argnums=(0, 1, 2))(q, k, v)
    np.testing.assert_allclose(got[0], want[0], rtol=1e-5)
    for g, w in zip(got[1], want[1]):
        np.testing.assert_allclose(g, w, atol=1e-4)


def test_only_half_precision_attention_longer_than_a_block_is_blocked():
    q, k, _ = qkv()
    half = q.astype(jnp.bfloat16)
    assert attention._blockable(half, k, None, None)
    assert not attention._blockable(q, k, None, None)  # float32
    assert not attention._blockable(half, k, jnp.zeros(1), None)  # a bias
    assert not attention._blockable(half, k, None, 50.0)  # a soft cap
    assert not attention._blockable(half[:, :attention.BLOCK], k, None, None)
    assert not attention._blockable(half[:, :LENGTH - 8], k, None, None)


def test_the_scope_puts_keras_attention_back_however_it_ends():
    from keras.src.backend.jax import nn as keras_nn

    original = keras_nn.dot_product_attention
    for mode in (attention.BLOCKS, attention.CUDNN):
        with pytest.raises(RuntimeError):
            with attention.fused_scope(mode):
                assert keras_nn.dot_product_attention is not original
                raise RuntimeError("the trace failed")
        assert keras_nn.dot_product_attention is original
    with attention.fused_scope(attention.NATIVE) as record:
        assert keras_nn.dot_product_attention is original
    assert record.how == attention.AS_WRITTEN


@pytest.mark.parametrize("family", ["llama", "gemma"])
def test_a_step_traced_on_cpu_keeps_one_blocks_scores(monkeypatch, family):
    # A backbone in mixed bfloat16 at 4 blocks' length: attention on CPU
    # keeps every score (Keras's, or Gemma's own einsums, which it uses
    # off GPUs); blocked, XLA's temporaries shrink and the cost says how
    # attention was costed.
    def build():
        keras.config.set_dtype_policy("mixed_bfloat16")
        try:
            return hub_backbone(family, num_layers=2)
        finally:
            keras.config.set_dtype_policy("float32")

    dist = keras.distribution.DataParallel(
        devices=keras.distribution.list_devices())
    shapes = {"token_ids": [4 * attention.BLOCK],
              "padding_mask": [4 * attention.BLOCK]}

    def costed():
        return cost.layout_cost(build, dist, 8, "adam", None, shapes,
                                timeout=300, quick=True)

    fused = costed()
    monkeypatch.setattr(target.Target, "attention", attention.NATIVE)
    written = costed()
    assert fused["attention"] == attention.BLOCKS
    assert written["attention"] == attention.AS_WRITTEN
    # 8 heads x 2048 x 2048 float32 scores, per sequence: 128 MiB.
    assert written["xla"]["temp"] - fused["xla"]["temp"] > 100 * 2**20
    assert fused["memory"]["weights"] == written["memory"]["weights"]
    # Every block's products counted, and the scores' recompute in the
    # backward pass (as a fused kernel's) on top of Keras's own.
    assert written["flops"] < fused["flops"] < 1.2 * written["flops"]


def test_layers_that_choose_by_the_device_choose_as_on_a_gpu_in_scope():
    model = hub_backbone("gemma", num_layers=1)
    capped = hub_backbone("gemma", num_layers=1)
    layers = attention._chooses_by_device(model)
    for layer in attention._chooses_by_device(capped):
        layer.logit_soft_cap = 50.0

    def fused(layers):
        return [layer._use_fused_attention_op() for layer in layers]

    assert layers and not any(fused(layers))
    with attention.fused_scope(attention.BLOCKS, model):
        assert all(fused(layers))
    with attention.fused_scope(attention.BLOCKS, capped):
        assert not any(fused(attention._chooses_by_device(capped)))
    # Nothing of the scope is left on the instances.
    assert not any("_use_fused_attention_op" in vars(layer)
                   for layer in layers)
    assert not any(fused(layers))


def traced_under_cudnn(size):
    """The calls to cuDNN's attention when Keras's attention is traced
    with heads of `size` (its output's shape checked)."""
    from keras.src.backend.jax import nn as keras_nn

    q, k, v = (x.astype(jnp.bfloat16) for x in qkv(size=size))
    with attention.fused_scope(attention.CUDNN) as record:
        out = jax.eval_shape(
            lambda q, k, v: keras_nn.dot_product_attention(q, k, v), q, k, v)
    assert out.shape == q.shape
    return record.calls


def test_heads_cudnn_refuses_take_xlas_attention_as_keras_does_on_gpus():
    # JAX checks cuDNN's version before the heads: its CUDA plugin.
    gpu_compiler_or_skip()
    assert traced_under_cudnn(64) == 1
    assert traced_under_cudnn(256) == 0  # Gemma's
