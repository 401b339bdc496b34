"""A whole model placed under a layout map: every variable, and every
optimizer variable, each with its `CheckedPlacement` (`core/placer.py`),
matched by path.

An optimizer slot takes its model variable's layout (Keras creates it from
that variable, `add_variable_from_reference()`), with its own dtype; other
optimizer variables (counters, factored slots) are looked up in the layout
map by their own path. `optimizer_placements()` is the one place that
decides it, for the planner and the cost alike.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any
from collections.abc import Iterator

from ..core.placer import CheckedPlacement, Placer
from ..core.placement import (Placement, itemsize, model_variables,
                              variable_shape)
from .slots import optimizer_variables


@dataclass
class ModelPlacement:
    """A model's variables and its optimizer's, placed.

    Attributes:
        variables: (variable, CheckedPlacement) per model variable, each once.
        optimizer: the shape-only optimizer, or None.
        optimizer_variables: (variable, CheckedPlacement, is a slot) per optimizer
            variable.
        by_path: each model variable's CheckedPlacement by path.
        placer: the `Placer` of the layout map, for further lookups.
    """

    variables: list[tuple[Any, CheckedPlacement]]
    placer: Placer | None = None
    optimizer: Any = None
    optimizer_variables: list[tuple[Any, CheckedPlacement, bool]] = \
        field(default_factory=list)
    by_path: dict[str, CheckedPlacement] = field(default_factory=dict)

    def of(self, variable: Any) -> Placement:
        """The placement of a model variable, by its path."""
        return self.by_path[variable.path].placement

    def looked_up(self) -> Iterator[CheckedPlacement]:
        """Every CheckedPlacement a rule lookup made, model variables first, in
        order (slots follow their model variable's)."""
        yield from (p for _, p in self.variables)
        yield from (p for _, p, slot in self.optimizer_variables
                    if not slot)


def slot_placement(slot: Any, reference: CheckedPlacement) -> CheckedPlacement:
    """A slot placed as its model variable is, with the slot's dtype."""
    placement = dataclasses.replace(
        reference.placement, shape=tuple(variable_shape(slot)),
        itemsize=itemsize(slot.dtype))
    return CheckedPlacement(list(reference.axes), placement, [], reference.rule)


def optimizer_placements(placer: Placer, opt_vars: list[tuple[Any, Any]],
                         by_path: dict[str, CheckedPlacement]
                         ) -> list[tuple[Any, CheckedPlacement, bool]]:
    """(variable, CheckedPlacement, is a slot) for `slots.optimizer_variables()`'s
    (variable, reference) pairs: a slot whose model variable is in
    `by_path` follows it; the others are looked up in the layout map."""
    out = []
    for v, ref in opt_vars:
        if ref is not None and ref.path in by_path:
            out.append((v, slot_placement(v, by_path[ref.path]), True))
        else:
            out.append((v, placer.variable(v, what="optimizer variable"),
                        False))
    return out


def place_variables(placer: Placer, variables: list) -> ModelPlacement:
    """Model variables placed under `placer`'s layout map."""
    pairs = [(v, placer.variable(v)) for v in variables]
    return ModelPlacement(pairs, placer,
                          by_path={v.path: p for v, p in pairs})


def place_model(model: Any, layout_map: Any, optimizer: Any = None,
                placer: Placer | None = None) -> ModelPlacement:
    """A model's placement under a layout map, with its optimizer's.

    Args:
        model: a built Keras model.
        layout_map: a Keras `LayoutMap` with a device mesh.
        optimizer: an optimizer or its name; None for the model's compiled
            one (none: no optimizer variables). It is copied and built
            shape-only for the model's trainable variables.
        placer: a `Placer` for `layout_map`, to reuse its rule lookup.
    """
    placer = placer or Placer(layout_map)
    variables = model_variables(model)
    placed = place_variables(placer, variables)
    opt, opt_vars = optimizer_variables(
        optimizer, model, [v for v in variables if v.trainable])
    placed.optimizer = opt
    placed.optimizer_variables = optimizer_placements(placer, opt_vars,
                                                      placed.by_path)
    return placed
