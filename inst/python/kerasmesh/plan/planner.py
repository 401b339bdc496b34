"""Pre-flight plans: how a layout map would place a model's variables.

Keras applies a layout map only when it creates variables, and fails late or
silently: a rule that matches nothing leaves weights replicated, a layout
shorter than a variable's rank is padded, a longer one or an indivisible
dimension fails inside JAX, a batch size the batch axis can't divide fails
mid-fit. `layout_plan()` works all of that out from shapes alone, before
anything is allocated. Placement is `core/placement.py`'s (each variable's
and each optimizer variable's through `placements.py`); the shape-only
build is `core/scopes.py`'s; optimizer slots are `slots.py`'s.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from typing import Any
from collections.abc import Iterable

from ..core import fits
from ..core.backend import require_backend
from .batches import batch_problems, check_batch_size
from .block_outputs import block_output_problems
from ..core.errors import KerasmeshError
from ..mesh.device_mesh import describe_mesh
from .outputs import (layer_output_paths, output_rules,
                      unmatched_output_problem)
from ..core.kinds import ERROR, WARNING
from ..core.layout_problems import problem
from ..core.placer import CheckedPlacement, Placer
from ..core.text import listing, plural, string
from .problems import (DEFAULT_SHARE, fix_problems, group_problems,
                       replicated_problems)
from ..core.resolve import RuleResolver
from ..core.scopes import compile_outside_stateless_scope, shape_only
from .placements import ModelPlacement, place_model
from ..core import kinds

MAX_HINTED = 20
COLUMNS = ("path", "shape", "dtype", "trainable", "rule", "axes",
           "shard_shape", "copies", "bytes", "device_bytes", "problem")


# --------------------------------------------------------------------------
# The model and the layout


def _is_layer(x: Any) -> bool:
    import keras

    return isinstance(x, keras.layers.Layer)


def as_model(model: Any) -> Any:
    """A Keras model (or layer) from a model or a builder function.

    A builder (a Python callable, or an R function reticulate wraps as
    one) is called inside `scopes.shape_only()`, so its weights are never
    allocated (a `compile()` in it works: see
    `scopes.compile_outside_stateless_scope()`); an error it raises
    propagates unchanged.

    Raises:
        KerasmeshError: kind `model` for anything else, or an unbuilt model.
    """
    if not _is_layer(model) and callable(model):
        with shape_only(), compile_outside_stateless_scope():
            model = model()
    if not _is_layer(model):
        raise KerasmeshError(
            kinds.MODEL,
            "`model` must be a Keras model or a function that returns one.",
            received=model)
    if not model.built:
        raise KerasmeshError(
            kinds.MODEL, "`model` must be built: it has no variables yet.",
            x=f"Model \"{model.name}\" has not been built.",
            i="Start it with an `Input()` of known shape, or call its "
              "`build()` method with an input shape.")
    return model


def layout_source(distribution: Any, batch_dim_name: str | None = None
                  ) -> tuple[Any, str]:
    """The LayoutMap and the batch axis from a LayoutMap, a ModelParallel
    or a DataParallel (an empty map on its mesh: every variable
    replicated).

    The batch axis defaults, as in Keras, to the mesh's first axis.
    """
    from keras.distribution import DataParallel, LayoutMap, ModelParallel

    layout_map = distribution
    if isinstance(distribution, (ModelParallel, DataParallel)):
        if batch_dim_name is None:
            batch_dim_name = distribution.batch_dim_name
        layout_map = distribution._layout_map \
            if isinstance(distribution, ModelParallel) \
            else LayoutMap(distribution.device_mesh)
    if not isinstance(layout_map, LayoutMap):
        raise KerasmeshError(
            kinds.LAYOUT_MAP,
            "`distribution` must be a layout map or a distribution.",
            received=distribution)
    if layout_map.device_mesh is None:
        raise KerasmeshError(
            kinds.LAYOUT_MAP, "`distribution` must have a device mesh.",
            x="Its `device_mesh` is NULL.")
    if batch_dim_name is None:
        batch_dim_name = layout_map.device_mesh.axis_names[0]
    return layout_map, batch_dim_name


# --------------------------------------------------------------------------
# Rules that place nothing


def _unmatched_problem(key: str, paths: list[str], claimed: list[str],
                       model_name: str, n_devices: int) -> dict:
    """A warning for a rule that decides no variable's layout."""
    if claimed:
        what = (f'The variable it matches ("{claimed[0]}") has an exact key '
                "of its own, which wins." if len(claimed) == 1 else
                f"The {len(claimed)} variables it matches "
                f"({listing(claimed)}) have exact keys of their own, which "
                "win.")
        return problem(
            kinds.UNMATCHED_RULE, WARNING, None, key,
            f'Rule {string(key)} is never used.',
            [("x", what), ("i", "Remove the rule, or the exact keys.")],
            "never used")
    bullets = [("x", "Variables it was meant for stay fully replicated on "
                     f"all {n_devices} devices.")]
    hints = []
    prefixed = f"{model_name}/{key}"
    try:
        pattern = re.compile(re.escape(model_name + "/") + "(?:" + key + ")")
        hits = [p for p in paths if pattern.fullmatch(p)]
    except re.error:
        hits = []
    if hits:
        hints.append(f"Paths start with the model's name: \"{prefixed}\" "
                     f"would match {_matches(hits)}.")
    try:
        pattern = re.compile(".*(?:" + key + ")")
        hits = [p for p in paths if pattern.fullmatch(p)]
    except re.error:
        hits = []
    if hits:
        hints.append(f"\".*{key}\" would match {_matches(hits)}: rules "
                     "must match the whole path.")
    if not hints and paths:
        hints.append(f"Variable paths look like \"{paths[0]}\"; see the "
                     "plan's `path` column.")
    bullets += [("i", h) for h in hints]
    return problem(kinds.UNMATCHED_RULE, WARNING, None, key,
                    f'Rule {string(key)} matches no variable.', bullets,
                    "matches nothing")


def _matches(paths: list[str]) -> str:
    """ '2 variables, such as "a"' or '1 variable ("a")'."""
    if len(paths) == 1:
        return f'1 variable ("{paths[0]}")'
    return f'{plural(len(paths), "variable")}, such as "{paths[0]}"'


# --------------------------------------------------------------------------
# The plan


@dataclass
class _Rules:
    """A layout map being planned, and which of its rules were used."""

    placer: Placer
    used: dict[str, int]
    involved: set[str] = field(default_factory=set)
    problems: list[dict] = field(default_factory=list)

    @property
    def keys(self) -> list[str]:
        return self.placer.keys

    @property
    def resolver(self) -> RuleResolver:
        return self.placer.resolver

    @property
    def n_devices(self) -> int:
        return math.prod(self.placer.sizes.values())

    def count(self, placement: ModelPlacement) -> None:
        """Note the rules each lookup used, and its problems."""
        for placed in placement.looked_up():
            if placed.rule is not None:
                self.used[placed.rule] += 1
            self.involved.update(placed.clash)
            self.problems += placed.problems


def _row(v: Any, placed: CheckedPlacement) -> dict:
    """One row of the plan; shapes and bytes as floats for R (reticulate
    1.28 mangles integers beyond 2^31)."""
    p = placed.placement
    return {"path": v.path, "shape": [float(s) for s in p.shape],
            "dtype": str(v.dtype), "trainable": bool(v.trainable),
            "rule": placed.rule, "axes": list(placed.axes),
            "shard_shape": [float(s) for s in p.shard_shape],
            "copies": int(p.copies), "bytes": float(p.bytes),
            "device_bytes": float(p.device_bytes),
            "problem": "; ".join(x["short"] for x in placed.problems)
            or None}


def _columns(placement: ModelPlacement) -> dict:
    """The plan's columns, one row per model variable."""
    columns: dict[str, list] = {k: [] for k in COLUMNS}
    for v, placed in placement.variables:
        row = _row(v, placed)
        for k in COLUMNS:
            columns[k].append(row[k])
    return columns


def _optimizer_bytes(placement: ModelPlacement) -> dict:
    """Bytes of the optimizer's variables: in full, and on one device."""
    out = {"optimizer": placement.optimizer, "full": 0.0, "device": 0.0,
           "slots": 0}
    for _, placed, slot in placement.optimizer_variables:
        out["full"] += float(placed.placement.bytes)
        out["device"] += float(placed.placement.device_bytes)
        out["slots"] += int(slot)
    return out


def _unused_rules(rules: _Rules, model: Any, paths: list[str]
                  ) -> tuple[list[str], dict, list[dict]]:
    """Rules that decide no variable's layout, the rules for layer
    outputs, and a warning for each unused rule."""
    layer_outputs = layer_output_paths(model)
    outputs = output_rules(rules.keys, rules.resolver.patterns, rules.used,
                           layer_outputs)
    for_outputs = {r["key"] for r in outputs["rules"]}
    unmatched = [k for k in rules.keys if rules.used[k] == 0
                 and k not in rules.involved and k not in for_outputs]
    path_set = set(paths)
    problems = []
    for n, key in enumerate(unmatched):
        if key in outputs["unmatched"]:
            problems.append(unmatched_output_problem(key, layer_outputs))
            continue
        pattern = rules.resolver.patterns[rules.resolver.exact[key]]
        claimed = [k for k in rules.keys if k != key and k in path_set
                   and pattern.fullmatch(k)]
        # Hints scan every path twice: only for the first few rules.
        problems.append(_unmatched_problem(
            key, paths if n < MAX_HINTED else [], claimed, model.name,
            rules.n_devices))
    return unmatched, outputs, problems


def _summary(model: Any, placement: ModelPlacement, columns: dict,
             sizes: dict[str, int], batch_dim_name: str,
             batch_size: int | None, unmatched: list[str]) -> dict:
    """Totals: bytes per device as planned and fully replicated."""
    variables = [v for v, _ in placement.variables]
    trainable = [v for v in variables if v.trainable]
    opt = _optimizer_bytes(placement)
    weights = sum(columns["bytes"])
    trainable_bytes = sum(b for b, t in zip(columns["bytes"],
                                            columns["trainable"]) if t)
    device_weights = sum(columns["device_bytes"])
    device_gradients = sum(b for b, t in zip(columns["device_bytes"],
                                             columns["trainable"]) if t)
    batch_ways = sizes.get(batch_dim_name)
    optimizer = opt["optimizer"]
    device_total = device_weights + device_gradients + opt["device"]
    weight_ids = {id(w) for w in model.weights}
    return {
        "model": model.name,
        "variables": len(variables),
        "trainable": len(trainable),
        # As Keras's count_params(): weights only, not the state of seed
        # generators (Dropout's), which `variables` also lists.
        "parameters": float(sum(p.placement.items
                                for v, p in placement.variables
                                if id(v) in weight_ids)),
        "bytes": float(weights),
        "dtypes": sorted(set(columns["dtype"])),
        "device_weights": float(device_weights),
        "device_gradients": float(device_gradients),
        "device_optimizer": float(opt["device"]),
        "device_total": float(device_total),
        "need": fits.need(plan_total=device_total),
        "replicated_weights": float(weights),
        "replicated_gradients": float(trainable_bytes),
        "replicated_optimizer": float(opt["full"]),
        "replicated_total": float(weights + trainable_bytes + opt["full"]),
        "optimizer": None if optimizer is None else type(optimizer).__name__,
        "slots": (None if optimizer is None else
                  float(opt["slots"] / len(trainable)) if trainable
                  else 0.0),
        "devices": math.prod(sizes.values()),
        "batch_dim_name": batch_dim_name,
        "batch_ways": batch_ways,
        "batch_size": batch_size,
        "device_batch": (None if batch_size is None or not batch_ways
                         else float(batch_size / batch_ways)),
        "unmatched": unmatched,
    }


def plan_layout(model: Any, distribution: Any, batch_size: Any = None,
                optimizer: Any = None, batch_dim_name: str | None = None,
                samples: int | None = None,
                replicated_share: float | None = None) -> dict:
    """Plan how `distribution` would place `model`'s variables, without
    allocating.

    Args:
        model: a built Keras model or layer, or a function returning one
            (called in `scopes.shape_only()`; R passes its builder here).
        distribution: a Keras `ModelParallel` or `LayoutMap`.
        batch_size: the global batch size to check, or None.
        optimizer: an optimizer or its name; None for the model's compiled
            optimizer, if any.
        batch_dim_name: the batch axis; None for the distribution's, or the
            mesh's first axis.
        samples: the number of samples per epoch, to check the last batch.
        replicated_share: warn about an unmatched variable holding more
            than this share of a device's weights (default 0.05).

    Returns:
        {"variables": columns, "problems": list of problems, "groups": the
        problems grouped by rule and kind, with checked fixes ("problems"
        module), "outputs": rules for layer outputs ("outputs" module),
        "rules": columns, "summary": dict, "mesh": describe_mesh()}. Byte
        counts and parameter counts are floats; shapes are lists of floats
        (reticulate 1.28 mangles integers beyond 2^31).
    """
    return plan_placement(model, distribution, batch_size, optimizer,
                          batch_dim_name, samples, replicated_share)[0]


def plan_placement(model: Any, distribution: Any, batch_size: Any = None,
                   optimizer: Any = None, batch_dim_name: str | None = None,
                   samples: int | None = None,
                   replicated_share: float | None = None
                   ) -> tuple[dict, ModelPlacement]:
    """`plan_layout()`'s plan, and the `ModelPlacement` it was made from
    (for the cost, which places the step's arguments by path)."""
    require_backend(("jax",), "Planning a layout")
    batch_size = check_batch_size(batch_size)
    layout_map, batch_dim_name = layout_source(distribution, batch_dim_name)
    mesh = layout_map.device_mesh
    model = as_model(model)
    placer = Placer(layout_map)
    sizes, keys = placer.sizes, placer.keys
    rules = _Rules(placer, used={k: 0 for k in keys})
    placement = place_model(model, layout_map, optimizer, placer)
    rules.count(placement)
    columns = _columns(placement)
    unmatched, outputs, unused = _unused_rules(rules, model,
                                               columns["path"])
    problems = rules.problems + unused
    problems += batch_problems(batch_dim_name, batch_size, sizes, samples)
    share = DEFAULT_SHARE if replicated_share is None \
        else float(replicated_share)
    problems += replicated_problems(columns, share, rules.n_devices)
    problems += block_output_problems(model, columns["path"],
                                      columns["axes"], sizes,
                                      batch_dim_name, layout_map)
    groups = group_problems(problems, columns)
    layouts = {k: list(layout_map[k].axes) for k in keys}
    fix_problems(groups, layouts, columns, sizes, batch_dim_name)
    return {"variables": columns, "problems": problems, "groups": groups,
            "outputs": outputs["rules"],
            "rules": {"key": keys, "axes": [layouts[k] for k in keys],
                      "variables": [rules.used[k] for k in keys]},
            "summary": _summary(model, placement, columns, sizes,
                                batch_dim_name, batch_size, unmatched),
            "mesh": describe_mesh(mesh)}, placement


def first_error(problems: Iterable[dict]) -> KerasmeshError | None:
    """The first problem that would crash, as a KerasmeshError."""
    for p in problems:
        if p["severity"] == ERROR:
            return KerasmeshError(p["kind"], p["message"],
                                  [tuple(b) for b in p["bullets"]])
    return None
