"""Placing variables under a layout map: the rule of each path, the
`Placement` its layout gives, and what goes wrong.

The words, used the same way everywhere in the shim:

- a *layout* is one tensor's entries, one per dimension (None, a mesh axis
  name, or a tuple of names), as `TensorLayout.axes` holds them;
- a `Placement` (`placement.py`) is the arithmetic of one tensor under one
  layout on a mesh: splits, shard shape, copies, bytes;
- a `CheckedPlacement` is a `Placement` with the rule that gave its layout
  and the problems Keras or JAX would hit (`layout_problems.py`);
- `check_placement()` makes one from a layout; a `Placer` makes them for
  variable paths under a layout map, looking each path's rule up
  (`resolve.py`, the one rule lookup).

`check_placement()` follows Keras 3.15 and JAX from shapes alone: a missing
layout replicates the tensor; a shorter layout is padded with None; a
longer one, an unknown or repeated axis, or a dimension its mesh axes
can't divide fails inside JAX.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any
from collections.abc import Sequence

from .axes import format_axes
from .layout_problems import (ambiguous_path, axis_problems,
                              indivisible_dimension, padded_layout,
                              too_long_layout)
from .placement import (Placement, entry_axes, itemsize, mesh_sizes,
                        variable_shape)
from .resolve import RuleResolver, rule_keys


@dataclass(frozen=True)
class CheckedPlacement:
    """One tensor placed under a layout, with what goes wrong.

    Attributes:
        axes: the layout's entries as Keras applies them (padded with None;
            as given when too long), for reports.
        placement: the `Placement` (replicated when the layout would fail
            before splitting anything: too long, or several rules).
        problems: `layout_problems.problem()` dicts.
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


def check_placement(path: str, shape: Sequence[int],
                    layout: Sequence[Any] | None, rule: str | None,
                    sizes: dict[str, int], size: int = 1
                    ) -> CheckedPlacement:
    """Where one tensor goes under one layout, and what goes wrong.

    Follows Keras 3.15 and JAX: a missing layout replicates the tensor;
    a shorter layout is padded with None (so its entries split the leading
    dimensions); a longer one fails when JAX places the tensor, as does a
    dimension that its mesh axes can't divide evenly. A longer layout
    counts as replicated; axes the mesh lacks split nothing.

    Args:
        path, shape: the tensor (a variable's path, for messages).
        layout: its entries, or None.
        rule: the rule that gave the layout, for messages.
        sizes: {mesh axis: size}.
        size: bytes per element.
    """
    shape = [int(s) for s in shape]
    if layout is None:
        return CheckedPlacement([None] * len(shape),
                                Placement.replicated(shape, sizes, size), [],
                                rule)
    axes = list(layout)
    shown = format_axes(axes)
    if len(axes) > len(shape):
        return CheckedPlacement(
            axes, Placement.replicated(shape, sizes, size),
            [too_long_layout(path, shape, axes, rule)], rule)
    problems: list[dict] = []
    if len(axes) < len(shape):
        axes, padded = padded_layout(path, shape, axes, rule)
        problems.append(padded)
    named = [entry_axes(e) for e in axes]
    unknown = list(dict.fromkeys(a for n in named for a in n
                                 if a not in sizes))
    known = tuple(tuple(a for a in n if a in sizes) for n in named)
    placement = Placement.of(shape, known, sizes, size)
    problems += [indivisible_dimension(path, rule, d, shape[d], known[d],
                                       sizes)
                 for d in placement.indivisible]
    problems += axis_problems(path, rule, shown, unknown,
                              list(placement.repeated), sizes)
    return CheckedPlacement(axes, placement, problems, rule)


class Placer:
    """Placements under one layout map: the rule of each path, Keras's way
    (an exact key, else the one key that fullmatches: `RuleResolver`),
    then `check_placement()`."""

    def __init__(self, layout_map: Any,
                 resolver: RuleResolver | None = None):
        self.layout_map = layout_map
        self.keys = rule_keys(layout_map)
        self.resolver = resolver or RuleResolver(self.keys)
        self.sizes = mesh_sizes(layout_map.device_mesh)

    def place(self, path: str, shape: Sequence[int], size: int = 1,
              what: str = "variable") -> CheckedPlacement:
        """The rule and placement of one path, with its problems; a path
        that several rules match is replicated, with an error."""
        rule, clash = self.resolver.lookup(path)
        if clash:
            placed = check_placement(path, shape, None, None, self.sizes,
                                     size)
            placed.problems.append(ambiguous_path(path, clash, what))
            placed.clash.extend(clash)
            return placed
        layout = None if rule is None else list(self.layout_map[rule].axes)
        return check_placement(path, shape, layout, rule, self.sizes, size)

    def variable(self, v: Any, what: str = "variable") -> CheckedPlacement:
        """`place()` for a Keras variable (its path, shape and dtype)."""
        return self.place(v.path, variable_shape(v), itemsize(v.dtype), what)
