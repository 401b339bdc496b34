"""Attention costed as GPUs run it.

On a GPU, Keras's `ops.dot_product_attention` runs bfloat16 and float16
attention as cuDNN's fused (flash) attention: the scores of every query
against every key are never kept in memory, in the forward pass or the
backward. How a step's attention is traced for its figures depends on
the compiler (`target.py` decides which, `fused_scope()` applies it for
the trace only, and puts Keras's functions back however the trace ends):

* `CUDNN`, for XLA's GPU compiler without a GPU: Keras would choose
  cuDNN's attention only after asking a live GPU its compute capability,
  so the trace calls it as Keras would on one (`jax.nn.
  dot_product_attention(implementation="cudnn")`, for what cuDNN takes:
  half precision, four dimensions, no soft cap, and heads JAX's cuDNN
  call accepts; for the others, as Keras does on a GPU, XLA's own
  attention). The compiled step holds cuDNN's fused attention, as on the
  GPU;
* `BLOCKS`, for XLA's CPU compiler, which has no fused attention and would
  keep every score whole in float32 (for a Llama-3-70B block at 4096
  tokens, 4 GiB per sequence and copy), and for a GPU compile whose
  layout XLA's GPU partitioner refuses to give cuDNN ("Sharding on head
  dim is not allowed"): the same attention computed in blocks of `BLOCK`
  queries, each recomputed in the backward pass (`jax.checkpoint`): the
  memory of one block's scores, as a fused kernel needs, and the same
  result. Its operations run under the name scope `operations.SCOPE`, so
  that their time is attention's (`schedule.py`);
* `NATIVE`, on a machine with GPUs: Keras chooses as it does.

Either way keras-hub's attention layers that choose the fused call by the
device they run on (Gemma's: a method `_use_fused_attention_op()`) choose
by a GPU's rule during the trace: fused unless they drop out or cap their
logits. Attention written out as its own einsums and softmax is costed as
written.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from ..remat.blocks import all_layers
from .operations import SCOPE

# Queries a block: the scores kept are BLOCK x keys per head.
BLOCK = 512

# How attention is traced (`fused_scope()`'s mode).
CUDNN = "cudnn"          # cuDNN's fused attention, as Keras calls it on GPUs
BLOCKS = "blocks"        # computed in blocks of queries
NATIVE = "native"        # as Keras chooses on the devices it runs on
AS_WRITTEN = "written"   # computed as the model wrote it


@dataclass
class Fused:
    """What a trace under `fused_scope()` did: its `mode`, and how many
    `calls` to Keras's attention it changed."""

    mode: str = BLOCKS
    calls: int = 0

    @property
    def how(self) -> str:
        """What the cost says of attention: the mode, when a call used it;
        else `AS_WRITTEN`."""
        return self.mode if self.calls else AS_WRITTEN


def _fusable(query: Any, key: Any, soft_cap: Any) -> bool:
    """Whether GPUs would fuse this attention: half-precision queries and
    keys of four dimensions, no soft cap."""
    return (str(query.dtype) in ("bfloat16", "float16") and
            query.ndim == 4 and key.ndim == 4 and soft_cap is None)


def _blockable(query: Any, key: Any, bias: Any, soft_cap: Any) -> bool:
    """Whether GPUs would fuse this attention and blocks can compute it:
    fusable, longer than a block and a whole number of blocks, and
    nothing but a mask (no bias)."""
    if not _fusable(query, key, soft_cap):
        return False
    length = query.shape[1]
    return bias is None and length > BLOCK and length % BLOCK == 0


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
    with jax.named_scope(SCOPE):
        if masks is None:
            out = jax.lax.map(lambda a: one(a[0], a[1], None),
                              (index, blocks))
        else:
            out = jax.lax.map(lambda a: one(*a), (index, blocks, masks))
    return jnp.moveaxis(out, 0, 1).reshape(batch, length, heads, size)


def cudnn_attention(query: Any, key: Any, value: Any, bias: Any = None,
                    mask: Any = None, scale: Any = None,
                    is_causal: bool = False) -> Any:
    """Attention as Keras's JAX backend calls it on a GPU with cuDNN."""
    import jax

    return jax.nn.dot_product_attention(
        query, key, value, bias=bias, mask=mask, scale=scale,
        is_causal=is_causal, implementation="cudnn")


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
def fused_scope(mode: str, model: Any = None) -> Iterator[Fused]:
    """While tracing `model`'s step: Keras's JAX `dot_product_attention`
    traced as `mode` says (`CUDNN` or `BLOCKS`, for the calls GPUs would
    fuse; `NATIVE`: Keras's own), and the model's layers that choose it by
    the device choosing as on a GPU. Yields the `Fused` record of the
    trace."""
    record = Fused(mode)
    if mode == NATIVE:
        yield record
        return
    from keras.src.backend.jax import nn as keras_nn

    original = keras_nn.dot_product_attention

    def dot_product_attention(query: Any, key: Any, value: Any,
                              bias: Any = None, mask: Any = None,
                              scale: Any = None, is_causal: bool = False,
                              flash_attention: Any = None,
                              attn_logits_soft_cap: Any = None) -> Any:
        if mode == CUDNN and _fusable(query, key, attn_logits_soft_cap):
            try:
                out = cudnn_attention(query, key, value, bias, mask, scale,
                                      is_causal)
            except (NotImplementedError, ValueError):
                pass  # cuDNN refuses it (a head over 128): XLA's, as Keras
            else:
                record.calls += 1
                return out
        if mode == BLOCKS and _blockable(query, key, bias,
                                         attn_logits_soft_cap):
            record.calls += 1
            return blocked_attention(query, key, value, mask, scale,
                                     is_causal)
        return original(query, key, value, bias=bias, mask=mask,
                        scale=scale, is_causal=is_causal,
                        flash_attention=flash_attention,
                        attn_logits_soft_cap=attn_logits_soft_cap)

    keras_nn.dot_product_attention = dot_product_attention
    try:
        with _as_on_gpu(model):
            yield record
    finally:
        keras_nn.dot_product_attention = original
