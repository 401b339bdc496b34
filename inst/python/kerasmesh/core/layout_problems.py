"""What goes wrong placing one variable under one layout, and the rule
lookup that picks its layout.

`locate()` follows Keras 3.15 and JAX from shapes alone: a missing layout
replicates the variable; a shorter layout is padded with None; a longer one,
an unknown or repeated axis, or a dimension its mesh axes can't divide fails
inside JAX. The arithmetic is `Placement`'s (`placement.py`); this module
adds the problems. `Placer` adds the rule lookup (`RuleResolver`) for a
layout map. Problems are plain dicts (`problem()`); `plan/problems.py`
groups them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any
from collections.abc import Sequence

from .arrays import itemsize
from .axes import format_axes
from .layout import rule_keys
from .mesh import format_shape
from .placement import (Placement, entry_axes, mesh_sizes, variable_shape,
                        ways)
from .resolve import RuleResolver
from .text import listing, plural
from . import kinds

ERROR = "error"
WARNING = "warning"
MAX_NAMED = 3


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
    return f'Rule "{rule}"' if rule is not None else "The layout"


def _dim(d: int) -> str:
    """A dimension as R users count: 1-based."""
    return f"dimension {d + 1}"


def _axis_sizes(names: Sequence[str], sizes: dict[str, int]) -> str:
    return " and ".join(f'"{a}" ({sizes[a]})' for a in names)


def _too_long(path: str, shape: Sequence[int], axes: list,
              rule: str | None) -> dict:
    """The error for a layout with more entries than the variable's rank."""
    rank = len(shape)
    return problem(
        kinds.LAYOUT_RANK, ERROR, path, rule,
        f'{_who(rule)} gives variable "{path}" a layout longer than '
        f"its rank.",
        [("x", f"Layout {format_axes(axes)} has "
               f"{plural(len(axes), 'entry')}, but \"{path}\" has rank "
               f"{rank} (shape {format_shape(shape) if rank else '()'}); "
               "JAX fails when the variable is created."),
         ("i", f"Give one entry per dimension ({rank}), NA for a "
               "dimension that is not split.")],
        f"layout longer than rank {rank}")


def _padded(path: str, shape: Sequence[int], axes: list,
            rule: str | None) -> tuple[list, dict]:
    """A shorter layout as Keras pads it, and the warning saying so."""
    rank = len(shape)
    padded = axes + [None] * (rank - len(axes))
    split = [d for d, e in enumerate(axes) if e is not None]
    what = (f"splits {', '.join(_dim(d) for d in split)}" if split
            else "splits nothing")
    return padded, problem(
        kinds.LAYOUT_RANK, WARNING, path, rule,
        f'{_who(rule)} gives variable "{path}" a layout shorter than '
        f"its rank.",
        [("x", f"Layout {format_axes(axes)} has "
               f"{plural(len(axes), 'entry')}, but \"{path}\" has rank "
               f"{rank} (shape {format_shape(shape) if rank else '()'}); "
               f"Keras pads it to {format_axes(padded)}, which {what}."),
         ("i", "Give one entry per dimension, such as "
               f"{format_axes(([None] * (rank - len(axes))) + axes)} to "
               "split the last dimensions.")],
        f"layout shorter than rank {rank}, padded")


def _indivisible(path: str, rule: str | None, d: int, size: int,
                 names: Sequence[str], sizes: dict[str, int]) -> dict:
    """The error for dimension `d` that its mesh axes can't divide."""
    split = ways(names, sizes)
    return problem(
        kinds.LAYOUT_DIVISIBILITY, ERROR, path, rule,
        f'{_who(rule)} can\'t split variable "{path}" evenly.',
        [("x", f"{_dim(d).capitalize()} has size {size}, which "
               f"mesh axis {_axis_sizes(names, sizes)} can't "
               f"divide: {size} is not a multiple of {split}; "
               "JAX fails when the variable is created."),
         ("i", f"Use a size divisible by {split}, split another "
               "dimension, or leave this one unsplit (NA).")],
        f"{_dim(d)} ({size}) not divisible by {split}",
        {"dimension": d + 1, "size": size, "axis": "+".join(names),
         "axis_size": split})


def _axis_problems(path: str, rule: str | None, shown: str,
                   unknown: list[str], repeated: list[str],
                   sizes: dict[str, int]) -> list[dict]:
    """Errors for axes the mesh lacks and axes used for two dimensions."""
    out = []
    if unknown:
        out.append(problem(
            kinds.LAYOUT_AXES, ERROR, path, rule,
            f'{_who(rule)} splits variable "{path}" over an axis the mesh '
            "doesn't have.",
            [("x", f"Unknown axis {listing(unknown)}; the mesh's axes are "
                   f"{listing(list(sizes))}."),
             ("i", "Use the mesh's axis names, or NA.")],
            f"unknown axis {listing(unknown)}"))
    if repeated:
        out.append(problem(
            kinds.LAYOUT_AXES, ERROR, path, rule,
            f'{_who(rule)} splits variable "{path}" over a mesh axis twice.',
            [("x", f"Axis {listing(repeated)} appears more than once in "
                   f"{shown}; JAX fails when the variable is created."),
             ("i", "Use each mesh axis for at most one dimension.")],
            f"axis {listing(repeated)} used twice"))
    return out


@dataclass(frozen=True)
class Placed:
    """One variable placed under a layout map, with what goes wrong.

    Attributes:
        axes: the layout's entries as Keras applies them (padded with None;
            as given when too long), for reports.
        placement: the `Placement` (replicated when the layout would fail
            before splitting anything: too long, or several rules).
        problems: `problem()` dicts.
        rule: the key of the rule that decided the layout, or None.
        clash: the keys of all rules that match when more than one does.
    """

    axes: list
    placement: Placement
    problems: list = field(default_factory=list)
    rule: str | None = None
    clash: list = field(default_factory=list)

    def as_dict(self) -> dict:
        """{"axes", "shard_shape", "copies", "problems"} as plain values."""
        return {"axes": list(self.axes),
                "shard_shape": list(self.placement.shard_shape),
                "copies": self.placement.copies,
                "problems": self.problems}


def locate(path: str, shape: Sequence[int], axes: Sequence[Any] | None,
           rule: str | None, sizes: dict[str, int], size: int = 1
           ) -> Placed:
    """Where one variable goes under one layout, and what goes wrong.

    Follows Keras 3.15 and JAX: a missing layout replicates the variable;
    a shorter layout is padded with None (so its entries split the leading
    dimensions); a longer one fails when JAX places the variable, as does a
    dimension that its mesh axes can't divide evenly. A longer layout
    counts as replicated; axes the mesh lacks split nothing.

    Args:
        path, shape: the variable.
        axes: its layout's entries, or None.
        rule: the rule that gave the layout, for messages.
        sizes: {mesh axis: size}.
        size: bytes per element.
    """
    shape = [int(s) for s in shape]
    if axes is None:
        return Placed([None] * len(shape),
                      Placement.replicated(shape, sizes, size), [], rule)
    axes = list(axes)
    shown = format_axes(axes)
    if len(axes) > len(shape):
        return Placed(axes, Placement.replicated(shape, sizes, size),
                      [_too_long(path, shape, axes, rule)], rule)
    problems: list[dict] = []
    if len(axes) < len(shape):
        axes, padded = _padded(path, shape, axes, rule)
        problems.append(padded)
    named = [entry_axes(e) for e in axes]
    unknown = list(dict.fromkeys(a for n in named for a in n
                                 if a not in sizes))
    known = tuple(tuple(a for a in n if a in sizes) for n in named)
    placement = Placement.of(shape, known, sizes, size)
    problems += [_indivisible(path, rule, d, shape[d], known[d], sizes)
                 for d in placement.indivisible]
    problems += _axis_problems(path, rule, shown, unknown,
                               list(placement.repeated), sizes)
    return Placed(axes, placement, problems, rule)


def place(path: str, shape: Sequence[int], axes: Sequence[Any] | None,
          rule: str | None, sizes: dict[str, int]) -> dict:
    """`locate()` as plain values: {"axes", "shard_shape", "copies",
    "problems"}."""
    return locate(path, shape, axes, rule, sizes).as_dict()


class Placer:
    """Placements under one layout map: the rule of each path, Keras's way
    (an exact key, else the one key that fullmatches), then `locate()`."""

    def __init__(self, layout_map: Any,
                 resolver: RuleResolver | None = None):
        self.layout_map = layout_map
        self.keys = rule_keys(layout_map)
        self.resolver = resolver or RuleResolver(self.keys)
        self.sizes = mesh_sizes(layout_map.device_mesh)

    def place(self, path: str, shape: Sequence[int], size: int = 1,
              what: str = "variable") -> Placed:
        """The rule and placement of one path, with its problems; a path
        that several rules match is replicated, with an error."""
        index, clash = self.resolver.resolve(path)
        if clash:
            keys = [self.resolver.keys[i] for i in clash]
            placed = locate(path, shape, None, None, self.sizes, size)
            placed.problems.append(_ambiguous(path, keys, what))
            placed.clash.extend(keys)
            return placed
        rule = None if index is None else self.resolver.keys[index]
        axes = None if rule is None else list(self.layout_map[rule].axes)
        return locate(path, shape, axes, rule, self.sizes, size)

    def variable(self, v: Any, what: str = "variable") -> Placed:
        """`place()` for a Keras variable (its path, shape and dtype)."""
        return self.place(v.path, variable_shape(v), itemsize(v.dtype), what)


def _ambiguous(path: str, keys: list[str], what: str) -> dict:
    """The error for a path that several rules match."""
    return problem(
        kinds.LAYOUT_AMBIGUOUS, ERROR, path, keys[0],
        f'{what.capitalize()} "{path}" must match at most one layout '
        "rule.",
        [("x", f"It matches rules {listing(keys)}; Keras fails when "
               "it creates the variable."),
         ("i", "Make the keys more specific, or add the exact path as "
               "a key (an exact key wins over patterns).")],
        f"matches {len(keys)} rules")
