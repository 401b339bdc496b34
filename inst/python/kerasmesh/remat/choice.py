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

_ABSENT = object()


def check_remat(remat: Any, allow_none: bool = False) -> str | None:
    """`remat`, if it is one of `CHOICES` (or None, where allowed).

    Raises:
        KerasmeshError: kind `remat` for anything else.
    """
    if remat is None and allow_none:
        return None
    if isinstance(remat, str) and remat in CHOICES:
        return remat
    raise KerasmeshError(
        kinds.REMAT, "`remat` must be one of " + ", ".join(quoted(CHOICES)) +
        ".", received=remat,
        i='"full" recomputes each block in the backward pass; '
          '"save_matmuls" keeps its matrix products.')


def policy(remat: str) -> Any:
    """The `jax.checkpoint` policy of a choice other than "none"."""
    import jax

    if remat == SAVE_MATMULS:
        return jax.checkpoint_policies.dots_with_no_batch_dims_saveable
    return None


def model_remat(model: Any) -> str:
    """The choice kerasmesh applied to `model`'s blocks, or "none"."""
    marks = {remat_mark(x) for x in marked_layers(model)}
    return marks.pop() if len(marks) == 1 else NONE


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
        {"remat": the choice, "blocks": the blocks' names}.

    Raises:
        KerasmeshError: kind `model` for a value that is not a Keras model;
            kind `remat` for an unknown choice; kind `remat_blocks` for a
            model without blocks or a name in `layers` it lacks (checked
            before anything changes).
    """
    require_backend(("jax",), "Rematerializing a model's blocks")
    import keras

    if not isinstance(model, keras.layers.Layer):
        raise KerasmeshError(kinds.MODEL, "`model` must be a Keras model.",
                             received=model)
    remat = check_remat(remat)
    blocks = find_blocks(model, layers) if remat != NONE or layers else []
    for layer in marked_layers(model):
        _uninstall(layer)
    if remat != NONE:
        for layer in blocks:
            _install(layer, remat)
    return {"remat": remat,
            "blocks": [x.name for x in blocks] if remat != NONE else []}


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
    blocks = find_blocks(model) if remat != NONE else []
    saved = [(x, vars(x).get("call", _ABSENT)) for x in all_layers(model)]
    try:
        for layer in marked_layers(model):
            _uninstall(layer)
        for layer in blocks:
            _install(layer, remat)
        yield remat
    finally:
        for layer, call in saved:
            if call is _ABSENT:
                vars(layer).pop("call", None)
            else:
                object.__setattr__(layer, "call", call)
