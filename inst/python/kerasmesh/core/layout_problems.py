"""What goes wrong placing one tensor under one layout, as plain
`problem()` dicts: a layout longer or shorter than the tensor's rank, a
dimension its mesh axes can't divide, an axis the mesh lacks or uses twice,
a path that several rules match. `placer.py` finds them; `plan/problems.py`
groups them.
"""

from __future__ import annotations

from collections.abc import Sequence

from .axes import format_axes
from .placement import ways
from .resolve import ambiguous_rule
from .text import format_shape, listing, plural, string
from . import kinds
from .kinds import ERROR, WARNING


def problem(kind: str, severity: str, path: str | None, rule: str | None,
            message: str, bullets: list[tuple[str, str]], short: str,
            facts: dict | None = None) -> dict:
    """One planning problem as plain values.

    Args:
        kind: the condition kind R raises (`kerasmesh_<severity>_<kind>`).
        severity: `ERROR` (would crash) or `WARNING` (would mis-shard).
        path, rule: the variable and the rule concerned, or None.
        message, bullets: the problem statement and its `(name, text)`
            bullets, as for `KerasmeshError`.
        short: a few words for the plan's `problem` column.
        facts: values R or the fixer needs (dimension, sizes).

    Raises:
        kinds.UnknownKind: when `kind` is not a registered kind of
            `severity`.
    """
    kinds.check(kind, severity)
    return {"kind": kind, "severity": severity, "path": path, "rule": rule,
            "message": message, "bullets": [list(b) for b in bullets],
            "short": short, "facts": facts or {}}


def _who(rule: str | None) -> str:
    """The subject of a placement problem: the rule, or a bare layout."""
    return f'Rule {string(rule)}' if rule is not None else "The layout"


def _dim(d: int) -> str:
    """A dimension as R users count: 1-based."""
    return f"dimension {d + 1}"


def _axis_sizes(names: Sequence[str], sizes: dict[str, int]) -> str:
    return " and ".join(f'"{a}" ({sizes[a]})' for a in names)


def too_long_layout(path: str, shape: Sequence[int], axes: list,
                    rule: str | None) -> dict:
    """The error for a layout with more entries than the variable's rank."""
    rank = len(shape)
    return problem(
        kinds.LAYOUT_RANK, ERROR, path, rule,
        f'{_who(rule)} gives variable {string(path)} a layout longer than '
        f"its rank.",
        [("x", f"Layout {format_axes(axes)} has "
               f"{plural(len(axes), 'entry')}, but {string(path)} has rank "
               f"{rank} (shape {format_shape(shape) if rank else '()'}); "
               "JAX fails when the variable is created."),
         ("i", f"Give one entry per dimension ({rank}), NA for a "
               "dimension that is not split.")],
        f"layout longer than rank {rank}")


def padded_layout(path: str, shape: Sequence[int], axes: list,
                  rule: str | None) -> tuple[list, dict]:
    """A shorter layout as Keras pads it, and the warning saying so."""
    rank = len(shape)
    padded = axes + [None] * (rank - len(axes))
    split = [d for d, e in enumerate(axes) if e is not None]
    what = (f"splits {', '.join(_dim(d) for d in split)}" if split
            else "splits nothing")
    return padded, problem(
        kinds.LAYOUT_RANK, WARNING, path, rule,
        f'{_who(rule)} gives variable {string(path)} a layout shorter than '
        f"its rank.",
        [("x", f"Layout {format_axes(axes)} has "
               f"{plural(len(axes), 'entry')}, but {string(path)} has rank "
               f"{rank} (shape {format_shape(shape) if rank else '()'}); "
               f"Keras pads it to {format_axes(padded)}, which {what}."),
         ("i", "Give one entry per dimension, such as "
               f"{format_axes(([None] * (rank - len(axes))) + axes)} to "
               "split the last dimensions.")],
        f"layout shorter than rank {rank}, padded")


def indivisible_dimension(path: str, rule: str | None, d: int,
                          size: int, names: Sequence[str],
                          sizes: dict[str, int]) -> dict:
    """The error for dimension `d` that its mesh axes can't divide."""
    split = ways(names, sizes)
    return problem(
        kinds.LAYOUT_DIVISIBILITY, ERROR, path, rule,
        f'{_who(rule)} can\'t split variable {string(path)} evenly.',
        [("x", f"{_dim(d).capitalize()} has size {size}, which "
               f"mesh axis {_axis_sizes(names, sizes)} can't "
               f"divide: {size} is not a multiple of {split}; "
               "JAX fails when the variable is created."),
         ("i", f"Use a size divisible by {split}, split another "
               "dimension, or leave this one unsplit (NA).")],
        f"{_dim(d)} ({size}) not divisible by {split}",
        {"dimension": d + 1, "size": size, "axis": "+".join(names),
         "axis_size": split})


def axis_problems(path: str, rule: str | None, shown: str,
                   unknown: list[str], repeated: list[str],
                   sizes: dict[str, int]) -> list[dict]:
    """Errors for axes the mesh lacks and axes used for two dimensions."""
    out = []
    if unknown:
        out.append(problem(
            kinds.LAYOUT_AXES, ERROR, path, rule,
            f'{_who(rule)} splits variable {string(path)} over an axis the '
            "mesh doesn't have.",
            [("x", f"Unknown axis {listing(unknown)}; the mesh's axes are "
                   f"{listing(list(sizes))}."),
             ("i", "Use the mesh's axis names, or NA.")],
            f"unknown axis {listing(unknown)}"))
    if repeated:
        out.append(problem(
            kinds.LAYOUT_AXES, ERROR, path, rule,
            f'{_who(rule)} splits variable {string(path)} over a mesh axis '
            'twice.',
            [("x", f"Axis {listing(repeated)} appears more than once in "
                   f"{shown}; JAX fails when the variable is created."),
             ("i", "Use each mesh axis for at most one dimension.")],
            f"axis {listing(repeated)} used twice"))
    return out


def ambiguous_path(path: str, keys: list[str], what: str = "variable") -> dict:
    """The error for a path that several rules match (`resolve.py`'s
    wording, the one `lm[[path]]` raises too)."""
    message, bullets = ambiguous_rule(path, keys, what)
    return problem(kinds.LAYOUT_AMBIGUOUS, ERROR, path, keys[0], message,
                   bullets, f"matches {len(keys)} rules")
