"""Attention costed as GPUs run it, on XLA's CPU backend.

On a GPU, Keras's `ops.dot_product_attention` runs bfloat16 and float16
attention as cuDNN's fused (flash) attention: the scores of every query
against every key are never kept in memory, in the forward pass or the
backward. XLA's CPU backend has no fused attention: there the same call
computes the scores whole, in float32 (for a Llama-3-70B block at 4096
tokens, 4 GiB per sequence and copy), and a plan made on CPU would count
them. So while a step is traced for its CPU figures (`fused_scope()`),
that call computes the same attention in blocks of `BLOCK` queries, each
recomputed in the backward pass (`jax.checkpoint`): memory of one block's
scores, as a fused kernel needs, and the same result. keras-hub's
attention layers that choose the fused call by the device they run on
(Gemma's: a method `_use_fused_attention_op()`) choose by a GPU's rule
during the trace: fused unless they drop out or cap their logits.
Attention written out as its own einsums and softmax is costed as
written. XLA's cost analysis counts a loop's body once: the other
blocks' operations are counted by `loops.py`.

`fused_scope()` replaces Keras's JAX `dot_product_attention`, and that
method of the model's own layers (an attribute of each instance), for
the trace only, and puts them back however the trace ends.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from ..remat.blocks import all_layers

# Queries a block: the scores kept are BLOCK x keys per head.
BLOCK = 512

FUSED = "fused"          # computed in blocks, as GPUs' fused attention
AS_WRITTEN = "written"   # computed as the model wrote it


@dataclass
class Fused:
    """What a trace under `fused_scope()` did: `calls` to Keras's attention
    computed in blocks."""

    calls: int = 0

    @property
    def how(self) -> str:
        return FUSED if self.calls else AS_WRITTEN


def _blockable(query: Any, key: Any, bias: Any, soft_cap: Any) -> bool:
    """Whether GPUs would fuse this attention and blocks can compute it:
    half-precision queries, longer than a block and a whole number of
    blocks, and nothing but a mask (no bias, no soft cap)."""
    if str(query.dtype) not in ("bfloat16", "float16") or query.ndim != 4:
        return False
    length = query.shape[1]
    return (bias is None and soft_cap is None and key.ndim == 4 and
            length > BLOCK and length % BLOCK == 0)


def blocked_attention(query: Any, key: Any, value: Any, mask: Any = None,
                      scale: Any = None, is_causal: bool = False) -> Any:
    """`jax.nn.dot_product_attention` (layout batch, length, heads, head
    size) computed `BLOCK` queries at a time, each block recomputed in the
    backward pass: the same values and gradients, one block's scores in
    memory."""
    import jax
    import jax.numpy as jnp

    batch, length, heads, size = query.shape
    keys = key.shape[1]
    n = length // BLOCK
    blocks = jnp.moveaxis(query.reshape(batch, n, BLOCK, heads, size), 1, 0)
    masks = None
    if mask is not None:
        full = jnp.broadcast_to(mask, mask.shape[:-2] + (length, keys))
        masks = jnp.moveaxis(
            full.reshape(full.shape[:-2] + (n, BLOCK, keys)), -3, 0)

    @jax.checkpoint
    def one(i: Any, q: Any, m: Any) -> Any:
        if is_causal:
            rows = i * BLOCK + jnp.arange(BLOCK)[:, None]
            causal = rows >= jnp.arange(keys)[None, :]
            m = causal if m is None else jnp.logical_and(m, causal)
        return jax.nn.dot_product_attention(q, key, value, mask=m,
                                            scale=scale, implementation="xla")

    index = jnp.arange(n)
    if masks is None:
        out = jax.lax.map(lambda a: one(a[0], a[1], None), (index, blocks))
    else:
        out = jax.lax.map(lambda a: one(*a), (index, blocks, masks))
    return jnp.moveaxis(out, 0, 1).reshape(batch, length, heads, size)


def _chooses_by_device(model: Any) -> list[Any]:
    """The model's layers that choose fused attention by the device they
    run on (keras-hub's Gemma attention and its kind)."""
    return [layer for layer in all_layers(model)
            if callable(getattr(type(layer), "_use_fused_attention_op",
                                None))]


def _gpu_rule(layer: Any) -> Any:
    """A GPU's choice for `layer` (keras-hub's rule on a GPU with fused
    attention): fused, unless it drops out or caps its logits."""
    def use_fused_attention_op() -> bool:
        return not getattr(layer, "dropout", 0.0) and \
            getattr(layer, "logit_soft_cap", None) is None
    return use_fused_attention_op


@contextlib.contextmanager
def _as_on_gpu(model: Any) -> Iterator[None]:
    """The model's attention layers choose by a GPU's rule, as instance
    attributes removed on the way out."""
    layers = _chooses_by_device(model)
    for layer in layers:
        object.__setattr__(layer, "_use_fused_attention_op", _gpu_rule(layer))
    try:
        yield
    finally:
        for layer in layers:
            layer.__dict__.pop("_use_fused_attention_op", None)


@contextlib.contextmanager
def fused_scope(platform: str, model: Any = None) -> Iterator[Fused]:
    """While tracing `model`'s step for `platform`'s figures: on "cpu",
    Keras's JAX `dot_product_attention` computes blockable attention in
    blocks (`blocked_attention()`), and the model's layers that choose it
    by the device choose as on a GPU; elsewhere, and for other attention,
    Keras's own. Yields the `Fused` record of the trace."""
    record = Fused()
    if platform != "cpu":
        yield record
        return
    from keras.src.backend.jax import nn as keras_nn

    original = keras_nn.dot_product_attention

    def dot_product_attention(query: Any, key: Any, value: Any,
                              bias: Any = None, mask: Any = None,
                              scale: Any = None, is_causal: bool = False,
                              flash_attention: Any = None,
                              attn_logits_soft_cap: Any = None) -> Any:
        if not _blockable(query, key, bias, attn_logits_soft_cap):
            return original(query, key, value, bias=bias, mask=mask,
                            scale=scale, is_causal=is_causal,
                            flash_attention=flash_attention,
                            attn_logits_soft_cap=attn_logits_soft_cap)
        record.calls += 1
        return blocked_attention(query, key, value, mask, scale, is_causal)

    keras_nn.dot_product_attention = dot_product_attention
    try:
        with _as_on_gpu(model):
            yield record
    finally:
        keras_nn.dot_product_attention = original
