"""Rematerialization choices, applied to a model's blocks.

What each block recomputes in the backward pass (`remat`):

* "none": nothing; the backward pass keeps what JAX saves by default;
* "save_matmuls": the block keeps the outputs of its matrix products with
  weights (its projections) and recomputes the rest: normalizations,
  activations, attention's scores and softmax (JAX's
  `checkpoint_policies.dots_with_no_batch_dims_saveable`; a product with
  batch dimensions, such as attention's query-key product, is recomputed);
* "full": everything; the block keeps only its inputs, and its forward
  pass runs again in the backward pass.

A remat is one choice for every block, or one per block in block order
(`PerBlock`, a tuple), such as "full" for the first blocks and
"save_matmuls" for the rest, or "save_matmuls" for the first and "none"
for the rest (`blend()`); `label()` says either in words.

`set_remat(model, remat)` applies a choice to the model's blocks for good
(until the next `set_remat()`), as training needs; `remat_scope(model,
remat)` applies one for the duration of a `with` (a cost's step), and
puts each layer's call back as it was on every path. Either way only
attributes of those layer instances change: the classes of Keras and
keras-hub are never touched.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

from ..core.backend import require_backend
from ..core.errors import KerasmeshError, quoted
from ..core import kinds
from .blocks import all_layers, find_blocks, marked_layers, remat_mark
from .checkpoint import checkpointed_call

NONE = "none"
SAVE_MATMULS = "save_matmuls"
FULL = "full"
CHOICES = (NONE, SAVE_MATMULS, FULL)

PerBlock = tuple  # one of CHOICES per block, in block order

_ABSENT = object()


def check_remat(remat: Any, allow_none: bool = False) -> str | PerBlock | None:
    """`remat`, if it is one of `CHOICES`, or a list of them (one per
    block: a `PerBlock`; a list of one is that choice), or None where
    allowed.

    Raises:
        KerasmeshError: kind `remat` for anything else.
    """
    if remat is None and allow_none:
        return None
    if isinstance(remat, str) and remat in CHOICES:
        return remat
    if isinstance(remat, (list, tuple)) and remat and \
            all(isinstance(r, str) and r in CHOICES for r in remat):
        return remat[0] if len(remat) == 1 else tuple(remat)
    raise KerasmeshError(
        kinds.REMAT, "`remat` must be one of " + ", ".join(quoted(CHOICES)) +
        ", or one of them per block.", received=remat,
        i='"full" recomputes each block in the backward pass; '
          '"save_matmuls" keeps its matrix products.')


def blend(n: int, blocks: int, more: str = FULL,
          less: str = SAVE_MATMULS) -> str | PerBlock:
    """`more` for the first `n` of `blocks` blocks, `less` (the choice
    before it in `CHOICES`, which recomputes less) for the rest. The
    first blocks' activations are the longest kept (the backward pass
    reaches them last), so they are the ones to recompute."""
    n = max(0, min(int(n), int(blocks)))
    return check_remat([more] * n + [less] * (blocks - n))


def rank(remat: str | PerBlock) -> float:
    """How much `remat` recomputes, by its place in `CHOICES` (averaged
    over the blocks of a `PerBlock`): fewer first."""
    if isinstance(remat, str):
        return float(CHOICES.index(remat))
    return sum(CHOICES.index(r) for r in remat) / len(remat)


def label(remat: str | PerBlock | None) -> str:
    """A remat in words: the choice, or its runs over the blocks
    ("full x4, save_matmuls x28")."""
    if remat is None or isinstance(remat, str):
        return remat or NONE
    runs: list[list] = []
    for r in remat:
        if runs and runs[-1][0] == r:
            runs[-1][1] += 1
        else:
            runs.append([r, 1])
    return ", ".join(f"{r} x{n}" for r, n in runs)


def _per_block(model: Any, remat: str | PerBlock,
               layers: list[str] | None = None) -> list[tuple[Any, str]]:
    """(block, choice) for every block `remat` rematerializes.

    Raises:
        KerasmeshError: kind `remat_blocks` for a model without blocks;
            kind `remat` for a per-block remat of another length.
    """
    if isinstance(remat, str):
        blocks = find_blocks(model, layers) if remat != NONE else []
        return [(b, remat) for b in blocks]
    blocks = find_blocks(model, layers, marked=False)
    if len(blocks) != len(remat):
        raise KerasmeshError(
            kinds.REMAT, f"`remat` must give one choice per block: the "
            f"model has {len(blocks)} block{'s' * (len(blocks) != 1)}.",
            received=list(remat),
            i="Give one choice for all blocks, or one for each.")
    return [(b, r) for b, r in zip(blocks, remat) if r != NONE]


def policy(remat: str) -> Any:
    """The `jax.checkpoint` policy of a choice other than "none"."""
    import jax

    if remat == SAVE_MATMULS:
        return jax.checkpoint_policies.dots_with_no_batch_dims_saveable
    return None


def model_remat(model: Any) -> str | PerBlock:
    """What kerasmesh applied to `model`'s blocks: one choice, one per
    block, or "none"."""
    marked = marked_layers(model)
    if not marked:
        return NONE
    try:
        blocks = find_blocks(model, marked=False)
    except KerasmeshError:
        blocks = marked
    if not {id(x) for x in marked} <= {id(b) for b in blocks}:
        blocks = marked  # layers named by the caller
    choices = [remat_mark(b) or NONE for b in blocks]
    return choices[0] if len(set(choices)) == 1 else tuple(choices)


def _install(layer: Any, remat: str) -> None:
    object.__setattr__(layer, "call",
                       checkpointed_call(layer, policy(remat), remat))


def _uninstall(layer: Any) -> None:
    """Put back the call `layer` had before kerasmesh's."""
    original = vars(layer)["call"].__wrapped__
    if getattr(original, "__self__", None) is layer and \
            getattr(original, "__func__", None) is type(layer).call:
        object.__delattr__(layer, "call")
    else:
        object.__setattr__(layer, "call", original)


def set_remat(model: Any, remat: Any = FULL,
              layers: list[str] | None = None) -> dict:
    """Apply `remat` to `model`'s blocks (`blocks.find_blocks()`), for
    training: the layers that carried kerasmesh's rematerialization lose
    it first, and "none" leaves none.

    Returns:
        {"remat": the choice (a list: one per block), "blocks": the names
        of the blocks rematerialized}.

    Raises:
        KerasmeshError: kind `model` for a value that is not a Keras model;
            kind `remat` for an unknown choice or one per block of another
            length; kind `remat_blocks` for a model without blocks or a
            name in `layers` it lacks (checked before anything changes).
    """
    require_backend(("jax",), "Rematerializing a model's blocks")
    import keras

    if not isinstance(model, keras.layers.Layer):
        raise KerasmeshError(kinds.MODEL, "`model` must be a Keras model.",
                             received=model)
    remat = check_remat(remat)
    if layers and remat == NONE:
        find_blocks(model, layers)  # names checked all the same
    chosen = _per_block(model, remat, layers)
    for layer in marked_layers(model):
        _uninstall(layer)
    for layer, choice in chosen:
        _install(layer, choice)
    return {"remat": list(remat) if isinstance(remat, tuple) else remat,
            "blocks": [x.name for x, _ in chosen]}


@contextlib.contextmanager
def remat_scope(model: Any, remat: str | None) -> Iterator[str]:
    """Apply `remat` to `model`'s blocks inside; each layer's call as it
    was after, on every path. None keeps the model as it is.

    Yields:
        The choice in effect inside.
    """
    if remat is None:
        yield model_remat(model)
        return
    remat = check_remat(remat)
    chosen = _per_block(model, remat)
    saved = [(x, vars(x).get("call", _ABSENT)) for x in all_layers(model)]
    try:
        for layer in marked_layers(model):
            _uninstall(layer)
        for layer, choice in chosen:
            _install(layer, choice)
        yield remat
    finally:
        for layer, call in saved:
            if call is _ABSENT:
                vars(layer).pop("call", None)
            else:
                object.__setattr__(layer, "call", call)
