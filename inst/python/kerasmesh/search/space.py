"""The layouts `search_layout()` chooses among.

Variables are grouped into classes the way the planner lists them: one
class per path with its block numbers abstracted (every block's query
kernel is one class), so a choice for a class is one layout rule. Each
dimension of a class is either unsplit or on one mesh axis (Keras 3.15
allows one axis per dimension), each axis at most once, and only where
the axis divides the dimension: `core.placer.check_placement()` decides
that, as it does for the planner. Rules the user pins (`fixed`) are
looked up with the planner's `Placer`; no code here reads layout axes or
matches rules of its own.
"""

from __future__ import annotations

import itertools
import math
import re
from dataclasses import dataclass, field
from typing import Any

from ..core.errors import KerasmeshError
from ..layout_map.rules import copy_layout_map, describe_layout_map
from ..core.kinds import ERROR
from ..core.placer import Placer, check_placement
from ..core.placement import (Layout, Placement, itemsize, mesh_sizes,
                              model_variables, variable_shape)
from ..core.resolve import exact_key, rule_keys
from ..core import kinds
from ..plan.block_outputs import block_output_rules

_NUMBER = re.compile(r"\d+")


@dataclass
class VariableClass:
    """Variables that differ only in block numbers, with one shape."""

    template: str
    paths: list[str]
    shape: list[int]
    dtype: str
    bytes: float
    options: list[Layout] = field(default_factory=list)
    fixed: Layout | None = None
    # A key matching exactly `paths` among the model's (`SearchSpace`).
    key: str = ""


def _placeable(path: str, shape: list[int], axes: Layout,
               sizes: dict[str, int]) -> bool:
    """Whether the planner would place `axes` on `shape` without error."""
    placed = check_placement(path, shape, list(axes), None, sizes)
    return not any(p["severity"] == ERROR for p in placed.problems)


def class_options(path: str, shape: list[int],
                  sizes: dict[str, int]) -> list[Layout]:
    """Every placement of one shape: each dimension unsplit or on one
    mesh axis, no axis twice, each split even. Unsplit comes first."""
    # An axis of one device splits nothing: its options would repeat.
    choices = [None] + [a for a in sizes if sizes[a] > 1]
    out = []
    for axes in itertools.product(choices, repeat=len(shape)):
        named = [a for a in axes if a is not None]
        if len(named) != len(set(named)):
            continue
        if _placeable(path, shape, axes, sizes):
            out.append(tuple(axes))
    return out


def variable_classes(model: Any, sizes: dict[str, int],
                     options: bool = True) -> list[VariableClass]:
    """The model's variables as classes, largest first (scalars left out),
    with each class's placements unless `options` is False."""
    groups: dict[tuple, VariableClass] = {}
    for v in model_variables(model):
        shape = variable_shape(v)
        if not shape:
            continue
        key = (_NUMBER.sub("#", v.path), tuple(shape), str(v.dtype))
        c = groups.get(key)
        if c is None:
            c = groups[key] = VariableClass(key[0], [], shape, str(v.dtype),
                                            0.0)
        c.paths.append(v.path)
        c.bytes += float(Placement.replicated(shape, sizes,
                                              itemsize(v.dtype)).bytes)
    classes = sorted(groups.values(), key=lambda c: -c.bytes)
    if options:
        for c in classes:
            c.options = class_options(c.paths[0], c.shape, sizes)
    return classes


class SearchSpace:
    """Classes of a model on a mesh, the user's pinned rules, and how a
    choice (one option index per class) becomes a layout map.

    Args:
        model: a built Keras model (shape-only).
        mesh: a Keras DeviceMesh.
        fixed: a LayoutMap of rules the search never changes, or None.
        batch_dim: the batch's axis, whose blocks' outputs every layout
            keeps split over it (`plan/block_outputs.py`); None: no such rule.

    Raises:
        KerasmeshError: kind `search_fixed` when pinned rules clash or
            can't place a variable.
    """

    def __init__(self, model: Any, mesh: Any, fixed: Any = None,
                 batch_dim: str | None = None):
        self.mesh = mesh
        self.sizes = mesh_sizes(mesh)
        self.classes = variable_classes(model, self.sizes)
        self.paths = [p for c in self.classes for p in c.paths]
        self._every_path = [v.path for v in model_variables(model)]
        self._keys: dict[tuple, str] = {}
        for c in self.classes:
            c.key = self.exact_key(c.paths)
        self.fixed = fixed
        self.fixed_keys = rule_keys(fixed) if fixed is not None else []
        self._shards: dict[tuple, float] = {}
        if fixed is not None:
            self._pin(fixed)
        self.outputs = [] if batch_dim is None else \
            block_output_rules(model, self.sizes, batch_dim, fixed)

    def _pin(self, fixed: Any) -> None:
        placer = Placer(fixed)
        for c in self.classes:
            placed = [placer.place(p, c.shape) for p in c.paths]
            errors = [q for pl in placed for q in pl.problems
                      if q["severity"] == ERROR]
            if errors:
                raise KerasmeshError(
                    kinds.SEARCH_FIXED, "`fixed` rules can't place variable "
                    f'"{errors[0]["path"]}".',
                    x=errors[0]["message"],
                    i="Pin rules that match each variable once and split "
                      "it evenly.")
            rules = {pl.rule for pl in placed}
            if rules == {None}:
                continue
            axes = {tuple(pl.axes) for pl in placed}
            if len(axes) > 1 or None in rules:
                raise KerasmeshError(
                    kinds.SEARCH_FIXED, f'`fixed` rules pin only some variables '
                    f'of "{c.template}".',
                    x=f"Rules {sorted(r for r in rules if r)} place "
                      f"{len(c.paths)} variables that differ only in "
                      "block numbers differently.",
                    i="Pin all blocks' variables alike, or none.")
            c.fixed = axes.pop()
        used = {placer.resolver.resolve(p)[0] for p in self.paths}
        unused = [k for i, k in enumerate(self.fixed_keys) if i not in used]
        if unused:
            raise KerasmeshError(
                kinds.SEARCH_FIXED, f'`fixed` rule "{unused[0]}" matches no '
                "variable.",
                x=f"The model's variables are such as \"{self.paths[0]}\".",
                i="Keys match whole variable paths: start them with \".*\" "
                  "or give the whole path.")

    @property
    def free(self) -> list[int]:
        """Indices of the classes the search may change."""
        return [i for i, c in enumerate(self.classes) if c.fixed is None]

    def size(self) -> int:
        """How many layouts the space holds."""
        return math.prod(len(self.classes[i].options) for i in self.free)

    def axes(self, choice: tuple) -> list[Layout]:
        """Each class's placement under `choice` (fixed ones as pinned)."""
        return [c.fixed if c.fixed is not None else c.options[k]
                for c, k in zip(self.classes, choice)]

    def shard_bytes(self, choice: tuple) -> list[float]:
        """Each class's bytes per variable on one device under `choice`
        (the `Placement` of its shape)."""
        out = []
        for i, (c, axes) in enumerate(zip(self.classes, self.axes(choice))):
            key = (i, axes)
            if key not in self._shards:
                self._shards[key] = float(Placement.of(
                    c.shape, axes, self.sizes, itemsize(c.dtype)).device_bytes)
            out.append(self._shards[key])
        return out

    def choice_of(self, placements: list[Layout]) -> tuple:
        """The choice that gives these placements (unknown ones unsplit)."""
        return tuple(c.options.index(tuple(a)) if tuple(a) in c.options
                     else 0 for c, a in zip(self.classes, placements))

    def fixed_rules(self) -> list[tuple[str, list]]:
        """The pinned rules as `(key, axes)`, as `layout.py` describes
        them."""
        if self.fixed is None:
            return []
        desc = describe_layout_map(self.fixed)
        return list(zip(desc["keys"], desc["axes"]))

    def rules(self, choice: tuple) -> list[tuple[str, list]]:
        """The fewest `(key, axes)` rules that give `choice`: free classes
        with the same placement share one key where one regular expression
        matches exactly their variables; unsplit classes get none."""
        by_axes: dict[Layout, list[int]] = {}
        for i in self.free:
            a = self.classes[i].options[choice[i]]
            if any(e is not None for e in a):
                by_axes.setdefault(a, []).append(i)
        return [(self.exact_key([p for i in members
                                 for p in self.classes[i].paths]), list(a))
                for a, members in by_axes.items()]

    def exact_key(self, paths: list[str]) -> str:
        """One key that matches exactly `paths` among the model's
        variables (`exact_key()`)."""
        known = self._keys.get(tuple(paths))
        if known is None:
            known = self._keys[tuple(paths)] = exact_key(paths,
                                                         self._every_path)
        return known

    def all_rules(self, choice: tuple) -> list[tuple[str, list]]:
        """Every rule of `layout_map(choice)`: the fixed ones, the
        choice's, the blocks' outputs'."""
        return self.fixed_rules() + self.rules(choice) + self.outputs

    def layout_map(self, choice: tuple) -> Any:
        """A Keras LayoutMap: the fixed rules, the choice's, then the
        blocks' outputs'."""
        import keras

        lm = keras.distribution.LayoutMap(self.mesh) if self.fixed is None \
            else copy_layout_map(self.fixed)
        for key, axes in self.rules(choice) + self.outputs:
            lm[key] = tuple(axes)
        return lm

    def start_choice(self, layout_map: Any) -> tuple:
        """The choice nearest a layout map: each class placed as the
        planner places its first variable under it."""
        placer = Placer(layout_map)
        placements = []
        for c in self.classes:
            placed = placer.place(c.paths[0], c.shape)
            ok = not any(p["severity"] == ERROR for p in placed.problems)
            placements.append(placed.axes if ok else [None] * len(c.shape))
        return self.choice_of(placements)
