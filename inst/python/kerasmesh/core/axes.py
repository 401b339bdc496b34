"""Layout axes in every form a user has them, checked against a mesh.

R sends axes as R wrote them: a list with None for an unsplit dimension
(from `c(NA, "model")` or `list(NULL, "model")`), or, untouched, the Python
object the user had: a tuple (`reticulate::tuple()`, keras3's `tuple()`),
a list, or a Keras `TensorLayout`. Everything is normalised here, once, for
every place that takes axes (layout map rules and sharding pictures).

Keras 3.15 allows one mesh axis per dimension: `TensorLayout` rejects a
tuple of axes as an entry ("Invalid axis names for Layout") when it gets
its mesh, so a layout map can never place one. Several axes on one
dimension (`"data+model"`, `list(c("data", "model"))`, a nested tuple) are
therefore rejected everywhere with the same error, kind `layout_axes`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from .errors import KerasmeshError, VALUE, quoted, received
from . import kinds
from .text import string

EXAMPLE = 'For example `c(NA, "model")` or `tuple(NULL, "model")`.'


def format_axes(axes: Sequence[Any] | None) -> str:
    """Axes as R writes them: (NA, "model"), several axes as "a+b"."""
    if axes is None:
        return "NULL"

    def one(a: Any) -> str:
        if a is None:
            return "NA"
        if isinstance(a, (list, tuple)):
            return '"' + "+".join(str(x) for x in a) + '"'
        return f'"{a}"'
    return "(" + ", ".join(one(a) for a in axes) + ")"


def _subject(key: str | None) -> str:
    return f'The layout for {string(key)}' if key is not None else "`axes`"


def layout_entries(axes: Any, key: str | None = None) -> list[Any]:
    """The entries of axes in any accepted form, one per dimension.

    A `TensorLayout` gives its axes; a string or None is one entry; a tuple
    or list gives its elements.

    Raises:
        KerasmeshError: kind `layout_axes` for anything else (a dict, a
            Keras variable, a number), naming the rule key.
    """
    from keras.distribution import TensorLayout

    if isinstance(axes, TensorLayout):
        return list(axes.axes)
    if axes is None or isinstance(axes, str):
        return [axes]
    if isinstance(axes, (list, tuple)):
        return list(axes)
    raise KerasmeshError(
        kinds.LAYOUT_AXES,
        f"{_subject(key)} must be mesh axis names, with NA for an unsplit "
        "dimension.",
        received=axes, i=EXAMPLE)


def _entry_names(entry: Any, mesh_axes: Sequence[str]) -> tuple | None:
    """The axis names of one entry: None, (name,), or several names.

    "a+b" means axes a and b unless the mesh has an axis named "a+b".
    """
    if entry is None:
        return None
    if isinstance(entry, str):
        if "+" in entry and entry not in mesh_axes:
            return tuple(entry.split("+"))
        return (entry,)
    if isinstance(entry, (list, tuple)) and entry and \
            all(isinstance(a, str) for a in entry):
        return tuple(entry)
    return ()


def check_axes(axes: Any, mesh_axes: Sequence[str], key: str | None = None,
               several: bool = False) -> tuple[Any, ...]:
    """Axes for a layout: per dimension a mesh axis name or None.

    Args:
        axes: the axes in any form `layout_entries()` accepts.
        mesh_axes: the mesh's axis names.
        key: the rule key, for messages (None: the `axes` argument).
        several: allow several axes on one dimension (for pictures of
            arrays JAX placed itself); Keras layouts never do.

    Returns:
        A tuple of None, names and (with `several`) tuples of names.

    Raises:
        KerasmeshError: kind `layout_axes`.
    """
    mesh_axes = [str(a) for a in mesh_axes]
    out: list[Any] = []
    for i, entry in enumerate(layout_entries(axes, key)):
        names = _entry_names(entry, mesh_axes)
        if names == ():
            raise KerasmeshError(
                kinds.LAYOUT_AXES,
                f"{_subject(key)} must be mesh axis names, with NA for an "
                "unsplit dimension.",
                [received(entry, f"Dimension {i + 1} is {VALUE}.")],
                i=EXAMPLE)
        if names is not None and len(names) > 1 and not several:
            raise KerasmeshError(
                kinds.LAYOUT_AXES,
                f"{_subject(key)} can't split one dimension over several "
                "mesh axes.",
                x=f"Dimension {i + 1} names "
                  f"{' and '.join(quoted(names))}.",
                i="Keras 3.15 layouts take one mesh axis per "
                  "dimension: split another dimension over the second "
                  "axis, or give the mesh one axis of their combined "
                  "size.")
        out.append(names if names is None or len(names) > 1 else names[0])
    _check_known(out, mesh_axes, key)
    return tuple(out)


def _check_known(entries: list[Any], mesh_axes: Sequence[str],
                 key: str | None) -> None:
    used = [a for e in entries if e is not None
            for a in (e if isinstance(e, tuple) else (e,))]
    unknown = list(dict.fromkeys(a for a in used if a not in mesh_axes))
    if unknown:
        raise KerasmeshError(
            kinds.LAYOUT_AXES,
            f"{_subject(key)} must use axes of the mesh.",
            x=f"Unknown axis: {', '.join(quoted(unknown))}.",
            i=f"The mesh's axes are {', '.join(quoted(mesh_axes))}.")
    repeated = sorted({a for a in used if used.count(a) > 1})
    if repeated:
        raise KerasmeshError(
            kinds.LAYOUT_AXES,
            f"{_subject(key)} can't use a mesh axis twice.",
            x=f"{', '.join(quoted(repeated))} appears "
              f"{max(used.count(a) for a in repeated)} times in "
              f"{format_axes(entries)}.")
