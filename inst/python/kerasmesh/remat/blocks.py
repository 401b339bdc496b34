"""The blocks of a model: the repeated units rematerialization wraps.

A model's blocks are, in this order of precedence:

1. the layers named by the caller (`layers=`), found by name anywhere in
   the model;
2. the layers that already carry kerasmesh's rematerialization (those a
   previous `set_remat()` chose);
3. a keras-hub backbone's `transformer_layers` (or those of a task's
   `backbone`, such as a `CausalLM`'s);
4. otherwise the model's own (top-level) layers that hold layers of their
   own and whose class appears at least twice: a model of repeated
   `Sequential` blocks, or of a custom block layer used several times.

A model with none of these has no blocks: asking to rematerialize it is
an error of kind `remat_blocks`, which says how to name them (a cost's
`remat = None` then costs the layers `set_remat()` marked).
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from ..core.errors import KerasmeshError
from ..core.text import listing
from ..core import kinds

# What a kerasmesh-checkpointed call carries: its choice.
MARK = "_kerasmesh_remat"


def all_layers(model: Any) -> list:
    """Every layer inside `model` (not the model itself), once each."""
    flatten = getattr(model, "_flatten_layers", None)
    if flatten is None:
        return []
    return list(flatten(include_self=False, recursive=True))


def remat_mark(layer: Any) -> str | None:
    """The choice kerasmesh's checkpointed call of `layer` applies, or
    None when `layer` has none (its call is its class's, or someone
    else's)."""
    return getattr(vars(layer).get("call"), MARK, None)


def marked_layers(model: Any) -> list:
    """The layers of `model` that carry kerasmesh's rematerialization."""
    return [x for x in all_layers(model) if remat_mark(x) is not None]


def _named(model: Any, names: list[str]) -> list:
    by_name = {}
    for layer in all_layers(model):
        by_name.setdefault(layer.name, layer)
    missing = [n for n in names if n not in by_name]
    if missing:
        raise KerasmeshError(
            kinds.REMAT_BLOCKS, "`layers` must name layers of the model.",
            x=f"Model \"{model.name}\" has no layer named "
              f"{listing(missing)}.",
            i="Its layers include " + listing(
                [n for n, x in by_name.items()
                 if type(x).__name__ != "InputLayer"]) + ".")
    return [by_name[n] for n in dict.fromkeys(names)]


def _hub_blocks(model: Any) -> list:
    for owner in (model, getattr(model, "backbone", None)):
        found = getattr(owner, "transformer_layers", None)
        if isinstance(found, (list, tuple)) and found:
            return list(found)
    return []


def _repeated_blocks(model: Any) -> list:
    top = [x for x in getattr(model, "layers", []) or []
           if list(x._flatten_layers(include_self=False, recursive=False))]
    counts = Counter(type(x) for x in top)
    return [x for x in top if counts[type(x)] >= 2]


def find_blocks(model: Any, layers: list[str] | None = None,
                marked: bool = True) -> list:
    """The blocks of `model` (see the module's docstring), in model order.
    With `marked` False, the marked layers come last instead of second:
    one choice per block needs all the blocks, also those left unmarked.

    Raises:
        KerasmeshError: kind `remat_blocks` when `layers` names a layer the
            model lacks, or the model has no blocks.
    """
    if layers:
        return _named(model, [str(n) for n in layers])
    finders = [marked_layers, _hub_blocks, _repeated_blocks]
    if not marked:
        finders = finders[1:] + finders[:1]
    for finder in finders:
        found = finder(model)
        if found:
            return found
    top = [x.name for x in getattr(model, "layers", []) or []
           if type(x).__name__ != "InputLayer"]
    raise KerasmeshError(
        kinds.REMAT_BLOCKS,
        f"Model \"{getattr(model, 'name', '?')}\" has no blocks to "
        "rematerialize.",
        x="It has no transformer layers and no repeated layer that holds "
          "layers of its own.",
        i="Name its blocks with `set_remat(model, layers = )`" +
          (f", from {listing(top)}." if top else "."))
