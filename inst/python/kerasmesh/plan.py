"""Pre-flight plans: how a layout map would place a model's variables.

Keras applies a layout map only when it creates variables, and fails late or
silently: a rule that matches nothing leaves weights replicated, a layout
shorter than a variable's rank is padded, a longer one or an indivisible
dimension fails inside JAX, a batch size the batch axis can't divide fails
mid-fit. `layout_plan()` works all of that out from shapes alone, before
anything is allocated.
"""

from __future__ import annotations

import math
import re
import warnings
import functools
from typing import Any, Iterable, Sequence

from .arrays import itemsize
from .backend import MESH_BACKENDS, require_backend
from .errors import KerasmeshError, describe_value
from .layout import format_axes, rule_keys
from .mesh import describe_mesh, format_shape
from .outputs import (layer_output_paths, output_rules,
                      unmatched_output_problem)
from .problems import (DEFAULT_SHARE, fix_problems, group_problems,
                       replicated_problems)
from .resolve import RuleResolver

ERROR = "error"
WARNING = "warning"
MAX_NAMED = 3
MAX_HINTED = 20
MAX_WHOLE = 2**31 - 1


class KerasmeshLayoutWarning(UserWarning):
    """A layout that would silently replicate or mis-shard variables."""


# --------------------------------------------------------------------------
# Building shape-only


class ShapeOnlyScope:
    """Create Keras variables with shapes but no values.

    Inside, variables are created as in `keras.StatelessScope`: their
    initialization is deferred, so nothing is allocated. Unlike a plain
    StatelessScope, leaving does not initialize them either, and no global
    distribution is in effect, so no layout is applied. Variables created
    inside stay uninitialized: use them for their paths, shapes and dtypes
    only.
    """

    def __enter__(self) -> "ShapeOnlyScope":
        import keras
        from keras.src.backend.common import global_state

        self._distribution = keras.distribution.distribution()
        self._pending = list(global_state.get_global_attribute(
            "uninitialized_variables", []) or [])
        if self._distribution is not None:
            keras.distribution.set_distribution(None)
        self._scope = keras.StatelessScope(initialize_variables=False)
        self._scope.__enter__()
        return self

    def __exit__(self, *exc: Any) -> bool:
        import keras
        from keras.src.backend.common import global_state

        self._scope.__exit__(*exc)
        global_state.set_global_attribute("uninitialized_variables",
                                          self._pending)
        if self._distribution is not None:
            keras.distribution.set_distribution(self._distribution)
        return False


class _NoDistribution:
    """No global distribution inside (the previous one is restored)."""

    def __enter__(self) -> "_NoDistribution":
        import keras

        self._distribution = keras.distribution.distribution()
        if self._distribution is not None:
            keras.distribution.set_distribution(None)
        return self

    def __exit__(self, *exc: Any) -> bool:
        import keras

        if self._distribution is not None:
            keras.distribution.set_distribution(self._distribution)
        return False


def shape_only() -> ShapeOnlyScope:
    """A `ShapeOnlyScope` (R enters it with `with()`)."""
    require_backend(MESH_BACKENDS, "Planning a layout")
    return ShapeOnlyScope()


def _is_layer(x: Any) -> bool:
    import keras

    return isinstance(x, keras.layers.Layer)


def as_model(model: Any) -> Any:
    """A Keras model (or layer) from a model or a builder function.

    A builder is called inside a `ShapeOnlyScope`, so its weights are never
    allocated.

    Raises:
        KerasmeshError: kind `model` for anything else, or an unbuilt model.
    """
    if not _is_layer(model) and callable(model):
        with ShapeOnlyScope():
            model = model()
    if not _is_layer(model):
        raise KerasmeshError(
            "model",
            "`model` must be a Keras model or a function that returns one.",
            [("x", f"Received {describe_value(model)}.")])
    if not model.built:
        raise KerasmeshError(
            "model", "`model` must be built: it has no variables yet.",
            [("x", f"Model \"{model.name}\" has not been built."),
             ("i", "Start it with an `Input()` of known shape, or call its "
                   "`build()` method with an input shape.")])
    return model


# --------------------------------------------------------------------------
# Layout sources


def layout_source(layout: Any, batch_dim_name: str | None = None
                  ) -> tuple[Any, str]:
    """The LayoutMap and the batch axis from a LayoutMap or ModelParallel.

    The batch axis defaults, as in Keras, to the mesh's first axis.
    """
    from keras.distribution import LayoutMap, ModelParallel

    if isinstance(layout, ModelParallel):
        if batch_dim_name is None:
            batch_dim_name = layout.batch_dim_name
        layout = layout._layout_map
    if not isinstance(layout, LayoutMap):
        raise KerasmeshError(
            "layout_map",
            "`layout` must be a layout map or a model-parallel "
            "distribution.",
            [("x", f"Received {describe_value(layout)}.")])
    if layout.device_mesh is None:
        raise KerasmeshError(
            "layout_map", "`layout` must have a device mesh.",
            [("x", "Its `device_mesh` is None.")])
    if batch_dim_name is None:
        batch_dim_name = layout.device_mesh.axis_names[0]
    return layout, batch_dim_name


# --------------------------------------------------------------------------
# Placement of one variable


def entry_axes(entry: Any) -> tuple[str, ...]:
    """The mesh axes of one layout entry: None, a name or several names."""
    if entry is None:
        return ()
    if isinstance(entry, (tuple, list)):
        return tuple(str(a) for a in entry)
    return (str(entry),)


def _who(rule: str | None) -> str:
    """The subject of a placement problem: the rule, or a bare layout."""
    return f'Rule "{rule}"' if rule is not None else "The layout"


def _dim(d: int) -> str:
    """A dimension as R users count: 1-based."""
    return f"dimension {d + 1}"


def _axis_sizes(names: Sequence[str], sizes: dict[str, int]) -> str:
    return " and ".join(f'"{a}" ({sizes[a]})' for a in names)


def _plural(n: int, word: str) -> str:
    if n == 1:
        return f"{n} {word}"
    return f"{n} {word[:-1]}ies" if word.endswith("y") else f"{n} {word}s"


def _listing(items: Sequence[str], more: int = 0) -> str:
    """ '"a", "b" and "c"', with "and N more" past MAX_NAMED."""
    quoted = [f'"{i}"' for i in items[:MAX_NAMED]]
    extra = len(items) - len(quoted) + more
    if extra > 0:
        quoted.append(f"{extra} more")
    if len(quoted) == 1:
        return quoted[0]
    return ", ".join(quoted[:-1]) + " and " + quoted[-1]


def place(path: str, shape: Sequence[int], axes: Sequence[Any] | None,
          rule: str | None, sizes: dict[str, int], n_devices: int
          ) -> dict:
    """Where one variable goes under one layout, and what goes wrong.

    Follows Keras 3.15 and JAX: a missing layout replicates the variable;
    a shorter layout is padded with None (so its entries split the leading
    dimensions); a longer one fails when JAX places the variable, as does a
    dimension that its mesh axes can't divide evenly. Variables whose layout
    would fail are counted as replicated.

    Returns:
        {"axes", "shard_shape", "copies", "problems"}.
    """
    rank = len(shape)
    problems: list[dict] = []
    if axes is None:
        return {"axes": [None] * rank, "shard_shape": list(shape),
                "copies": n_devices, "problems": problems}
    axes = list(axes)
    shown = format_axes(axes)
    shape_text = format_shape(shape) if rank else "()"
    if len(axes) > rank:
        problems.append(_problem(
            "layout_rank", ERROR, path, rule,
            f'{_who(rule)} gives variable "{path}" a layout longer than '
            f"its rank.",
            [("x", f"Layout {shown} has {_plural(len(axes), 'entry')}, but "
                   f'"{path}" has rank {rank} (shape {shape_text}); JAX '
                   "fails when the variable is created."),
             ("i", f"Give one entry per dimension ({rank}), NA for a "
                   "dimension that is not split.")],
            f"layout longer than rank {rank}"))
        return {"axes": axes, "shard_shape": list(shape),
                "copies": n_devices, "problems": problems}
    if len(axes) < rank:
        padded = axes + [None] * (rank - len(axes))
        split = [d for d, e in enumerate(axes) if e is not None]
        what = (f"splits {', '.join(_dim(d) for d in split)}" if split
                else "splits nothing")
        problems.append(_problem(
            "layout_rank", WARNING, path, rule,
            f'{_who(rule)} gives variable "{path}" a layout shorter than '
            f"its rank.",
            [("x", f"Layout {shown} has {_plural(len(axes), 'entry')}, but "
                   f'"{path}" has rank {rank} (shape {shape_text}); Keras '
                   f"pads it to {format_axes(padded)}, which {what}."),
             ("i", "Give one entry per dimension, such as "
                   f"{format_axes(([None] * (rank - len(axes))) + axes)} to "
                   "split the last dimensions.")],
            f"layout shorter than rank {rank}, padded"))
        axes = padded
    used: list[str] = []
    repeated: list[str] = []
    shard = list(shape)
    unknown: list[str] = []
    for d, entry in enumerate(axes):
        names = entry_axes(entry)
        missing = [a for a in names if a not in sizes]
        unknown += [a for a in missing if a not in unknown]
        names = tuple(a for a in names if a in sizes)
        if not names:
            continue
        for a in names:
            if a in used and a not in repeated:
                repeated.append(a)
            used.append(a)
        ways = math.prod(sizes[a] for a in names)
        shard[d] = -(-shape[d] // ways)
        if shape[d] % ways:
            problems.append(_problem(
                "layout_divisibility", ERROR, path, rule,
                f'{_who(rule)} can\'t split variable "{path}" evenly.',
                [("x", f"{_dim(d).capitalize()} has size {shape[d]}, which "
                       f"mesh axis {_axis_sizes(names, sizes)} can't "
                       f"divide: {shape[d]} is not a multiple of {ways}; "
                       "JAX fails when the variable is created."),
                 ("i", f"Use a size divisible by {ways}, split another "
                       "dimension, or leave this one unsplit (NA).")],
                f"{_dim(d)} ({shape[d]}) not divisible by {ways}",
                {"dimension": d + 1, "size": shape[d], "axis": "+".join(names),
                 "axis_size": ways}))
    if unknown:
        problems.append(_problem(
            "layout_axes", ERROR, path, rule,
            f'{_who(rule)} splits variable "{path}" over an axis the mesh '
            "doesn't have.",
            [("x", f"Unknown axis {_listing(unknown)}; the mesh's axes are "
                   f"{_listing(list(sizes))}."),
             ("i", "Use the mesh's axis names, or NA.")],
            f"unknown axis {_listing(unknown)}"))
    if repeated:
        problems.append(_problem(
            "layout_axes", ERROR, path, rule,
            f'{_who(rule)} splits variable "{path}" over a mesh axis twice.',
            [("x", f"Axis {_listing(repeated)} appears more than once in "
                   f"{shown}; JAX fails when the variable is created."),
             ("i", "Use each mesh axis for at most one dimension.")],
            f"axis {_listing(repeated)} used twice"))
        used = list(dict.fromkeys(used))
    copies = n_devices // math.prod(sizes[a] for a in used) if used \
        else n_devices
    return {"axes": axes, "shard_shape": shard, "copies": copies,
            "problems": problems}


def _problem(kind: str, severity: str, path: str | None, rule: str | None,
             message: str, bullets: list[tuple[str, str]], short: str,
             facts: dict | None = None) -> dict:
    return {"kind": kind, "severity": severity, "path": path, "rule": rule,
            "message": message, "bullets": [list(b) for b in bullets],
            "short": short, "facts": facts or {}}


# --------------------------------------------------------------------------
# Optimizer slots


def _optimizer_from(optimizer: Any, model: Any) -> Any:
    """A fresh optimizer like `optimizer` (or the model's compiled one)."""
    import keras

    if optimizer is None:
        optimizer = getattr(model, "optimizer", None)
        if optimizer is None:
            return None
    try:
        if isinstance(optimizer, keras.optimizers.Optimizer):
            return type(optimizer).from_config(optimizer.get_config())
        return keras.optimizers.get(optimizer)
    except (ValueError, TypeError) as e:
        raise KerasmeshError(
            "optimizer",
            "`optimizer` must be a Keras optimizer or the name of one.",
            [("x", f"Received {describe_value(optimizer)}: "
                   f"{str(e).splitlines()[0]}"),
             ("i", 'For example "adam" or "sgd".')]) from e


def _record_slots(optimizer: Any, slots: dict[int, Any]) -> None:
    """Make `optimizer` note which model variable each slot copies."""
    inner = getattr(optimizer, "inner_optimizer", None)
    if inner is not None:
        _record_slots(inner, slots)
    original = optimizer.add_variable_from_reference

    def recording(reference_variable, *args, **kwargs):
        variable = original(reference_variable, *args, **kwargs)
        slots[id(variable)] = reference_variable
        return variable

    optimizer.add_variable_from_reference = recording


def optimizer_variables(optimizer: Any, model: Any, trainable: list
                        ) -> tuple[Any, list[tuple[Any, Any]]]:
    """A shape-only copy of the optimizer, built for `trainable`.

    Returns:
        (optimizer or None, [(variable, reference variable or None)]).
        Slots copy a model variable's layout in Keras; other optimizer
        variables (counters, factored slots) are looked up in the layout map.
    """
    with _NoDistribution():
        # Optimizers create their counters from values, which a stateless
        # scope refuses; two scalars are allocated, the slots are not.
        optimizer = _optimizer_from(optimizer, model)
    if optimizer is None:
        return None, []
    slots: dict[int, Any] = {}
    _record_slots(optimizer, slots)
    with ShapeOnlyScope():
        optimizer.build(trainable)
    return optimizer, [(v, slots.get(id(v))) for v in optimizer.variables]


# --------------------------------------------------------------------------
# The plan


def _model_variables(model: Any) -> list:
    seen, out = set(), []
    for v in model.variables:
        if id(v) not in seen:
            seen.add(id(v))
            out.append(v)
    return out


def _shape(variable: Any) -> list[int]:
    return [int(s) for s in variable.shape]


def _resolve(resolver: RuleResolver, layout_map: Any, path: str,
             shape: list[int], sizes: dict[str, int], n_devices: int,
             what: str = "variable") -> tuple[str | None, dict]:
    """The rule and placement of one path, with its problems."""
    index, clash = resolver.resolve(path)
    if clash:
        keys = [resolver.keys[i] for i in clash]
        placed = place(path, shape, None, None, sizes, n_devices)
        placed["problems"].append(_problem(
            "layout_ambiguous", ERROR, path, keys[0],
            f'{what.capitalize()} "{path}" must match at most one layout '
            "rule.",
            [("x", f"It matches rules {_listing(keys)}; Keras fails when "
                   "it creates the variable."),
             ("i", "Make the keys more specific, or add the exact path as "
                   "a key (an exact key wins over patterns).")],
            f"matches {len(keys)} rules"))
        placed["clash"] = keys
        return None, placed
    rule = None if index is None else resolver.keys[index]
    axes = None if rule is None else list(layout_map[rule].axes)
    placed = place(path, shape, axes, rule, sizes, n_devices)
    placed["clash"] = []
    return rule, placed


def _device_bytes(shard: Sequence[int], size: int) -> float:
    return float(math.prod(shard) * size)


def _unmatched_problem(key: str, paths: list[str], claimed: list[str],
                       model_name: str, n_devices: int) -> dict:
    """A warning for a rule that decides no variable's layout."""
    if claimed:
        what = (f'The variable it matches ("{claimed[0]}") has an exact key '
                "of its own, which wins." if len(claimed) == 1 else
                f"The {len(claimed)} variables it matches "
                f"({_listing(claimed)}) have exact keys of their own, which "
                "win.")
        return _problem(
            "unmatched_rule", WARNING, None, key,
            f'Rule "{key}" is never used.',
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
    return _problem("unmatched_rule", WARNING, None, key,
                    f'Rule "{key}" matches no variable.', bullets,
                    "matches nothing")


def _matches(paths: list[str]) -> str:
    """ '2 variables, such as "a"' or '1 variable ("a")'."""
    if len(paths) == 1:
        return f'1 variable ("{paths[0]}")'
    return f'{_plural(len(paths), "variable")}, such as "{paths[0]}"'


def _batch_problems(batch_dim_name: str, batch_size: int | None,
                    sizes: dict[str, int], samples: int | None = None
                    ) -> list[dict]:
    if batch_dim_name not in sizes:
        return [_problem(
            "layout_axes", ERROR, None, None,
            f'Batch axis "{batch_dim_name}" is not an axis of the mesh.',
            [("x", f"The mesh's axes are {_listing(list(sizes))}; Keras "
                   "fails when it splits the first batch."),
             ("i", "Pass one of them as `batch_dim_name`.")],
            "unknown batch axis")]
    ways = sizes[batch_dim_name]
    if batch_size is None:
        return []
    last = samples % batch_size if samples else 0
    if batch_size % ways == 0 and last % ways == 0:
        return []
    if batch_size % ways == 0:
        return [_problem(
            "batch_size", ERROR, None, None,
            f"The last batch can't be split evenly over batch axis "
            f'"{batch_dim_name}" ({ways}).',
            [("x", f"{samples} samples in batches of {batch_size} leave a "
                   f"last batch of {last}, not a multiple of {ways}; JAX "
                   "fails at the end of the first epoch."),
             ("i", f"Drop or add samples to make {ways} divide the last "
                   "batch, or use a batch size that divides the sample "
                   "count.")],
            "last batch")]
    lower = (batch_size // ways) * ways
    options = [str(n) for n in (lower, lower + ways) if n > 0]
    return [_problem(
        "batch_size", ERROR, None, None,
        f'Batch size {batch_size} can\'t be split evenly over batch axis '
        f'"{batch_dim_name}" ({ways}).',
        [("x", f"{batch_size} is not a multiple of {ways}; JAX fails when "
               "Keras splits the first batch."),
         ("i", f"Use a multiple of {ways}, such as "
               f"{' or '.join(options)}; the last batch of an epoch must be "
               "a multiple too.")],
        "batch size")]


def _check_batch_size(batch_size: Any) -> int | None:
    if batch_size is None:
        return None
    ok = isinstance(batch_size, (int, float)) and \
        not isinstance(batch_size, bool) and math.isfinite(batch_size) and \
        float(batch_size).is_integer() and batch_size >= 1
    if not ok:
        raise KerasmeshError(
            "argument", "`batch_size` must be a positive whole number.",
            [("x", f"Received {describe_value(batch_size)}.")])
    if batch_size > MAX_WHOLE:
        # R's integers (and reticulate 1.28's conversion) stop there.
        raise KerasmeshError(
            "argument", f"`batch_size` must be at most {MAX_WHOLE:,}.",
            [("x", f"Received {int(batch_size):,}.")])
    return int(batch_size)


def plan_layout(model: Any, layout: Any, batch_size: Any = None,
                optimizer: Any = None, batch_dim_name: str | None = None,
                samples: int | None = None,
                replicated_share: float | None = None) -> dict:
    """Plan how `layout` would place `model`'s variables, without allocating.

    Args:
        model: a built Keras model or layer, or a function returning one
            (called in a `ShapeOnlyScope`).
        layout: a Keras `LayoutMap` or `ModelParallel`.
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
        "rules":
        columns, "summary": dict, "mesh": describe_mesh()}. Byte counts and
        parameter counts are floats; shapes are lists of floats (reticulate
        1.28 mangles integers beyond 2^31).
    """
    require_backend(MESH_BACKENDS, "Planning a layout")
    batch_size = _check_batch_size(batch_size)
    layout_map, batch_dim_name = layout_source(layout, batch_dim_name)
    mesh = layout_map.device_mesh
    sizes = {str(a): int(s) for a, s in zip(mesh.axis_names, mesh.shape)}
    n_devices = math.prod(sizes.values())
    model = as_model(model)
    keys = rule_keys(layout_map)
    resolver = RuleResolver(keys)

    variables = _model_variables(model)
    columns: dict[str, list] = {k: [] for k in (
        "path", "shape", "dtype", "trainable", "rule", "axes",
        "shard_shape", "copies", "bytes", "device_bytes", "problem")}
    problems: list[dict] = []
    used: dict[str, int] = {k: 0 for k in keys}
    involved: set[str] = set()
    placement: dict[int, dict] = {}
    for v in variables:
        path, shape = v.path, _shape(v)
        rule, placed = _resolve(resolver, layout_map, path, shape, sizes,
                                n_devices)
        if rule is not None:
            used[rule] += 1
        involved.update(placed["clash"])
        size = itemsize(v.dtype)
        placement[id(v)] = placed
        columns["path"].append(path)
        columns["shape"].append([float(s) for s in shape])
        columns["dtype"].append(str(v.dtype))
        columns["trainable"].append(bool(v.trainable))
        columns["rule"].append(rule)
        columns["axes"].append(list(placed["axes"]))
        columns["shard_shape"].append([float(s)
                                       for s in placed["shard_shape"]])
        columns["copies"].append(int(placed["copies"]))
        columns["bytes"].append(float(math.prod(shape) * size))
        columns["device_bytes"].append(
            _device_bytes(placed["shard_shape"], size))
        columns["problem"].append(
            "; ".join(p["short"] for p in placed["problems"]) or None)
        problems += placed["problems"]

    trainable = [v for v in variables if v.trainable]
    opt, opt_vars = optimizer_variables(optimizer, model, trainable)
    opt_device = opt_full = 0.0
    n_slots = 0
    for v, ref in opt_vars:
        size = itemsize(v.dtype)
        shape = _shape(v)
        opt_full += float(math.prod(shape) * size)
        if ref is not None and id(ref) in placement:
            n_slots += 1
            opt_device += _device_bytes(placement[id(ref)]["shard_shape"],
                                        size)
            continue
        rule, placed = _resolve(resolver, layout_map, v.path, shape, sizes,
                                n_devices, what="optimizer variable")
        if rule is not None:
            used[rule] += 1
        involved.update(placed["clash"])
        problems += placed["problems"]
        opt_device += _device_bytes(placed["shard_shape"], size)

    paths = columns["path"]
    path_set = set(paths)
    layer_outputs = layer_output_paths(model)
    outputs = output_rules(keys, resolver.patterns, used, layer_outputs)
    for_outputs = {r["key"] for r in outputs["rules"]}
    unmatched = [k for k in keys if used[k] == 0 and k not in involved
                 and k not in for_outputs]
    for n, key in enumerate(unmatched):
        if key in outputs["unmatched"]:
            problems.append(unmatched_output_problem(key, layer_outputs,
                                                     _problem))
            continue
        pattern = resolver.patterns[resolver.exact[key]]
        claimed = [k for k in keys if k != key and k in path_set
                   and pattern.fullmatch(k)]
        # Hints scan every path twice: only for the first few rules.
        problems.append(_unmatched_problem(
            key, paths if n < MAX_HINTED else [], claimed, model.name,
            n_devices))
    problems += _batch_problems(batch_dim_name, batch_size, sizes, samples)
    share = DEFAULT_SHARE if replicated_share is None \
        else float(replicated_share)
    problems += replicated_problems(columns, share, n_devices, _problem)
    groups = group_problems(problems, columns)
    fix_problems(groups, {k: list(layout_map[k].axes) for k in keys},
                 columns, sizes, batch_dim_name)

    weights = sum(columns["bytes"])
    trainable_bytes = sum(b for b, t in zip(columns["bytes"],
                                            columns["trainable"]) if t)
    device_weights = sum(columns["device_bytes"])
    device_gradients = sum(b for b, t in zip(columns["device_bytes"],
                                             columns["trainable"]) if t)
    batch_ways = sizes.get(batch_dim_name)
    summary = {
        "model": model.name,
        "variables": len(variables),
        "trainable": len(trainable),
        "parameters": float(sum(math.prod(_shape(v)) for v in variables)),
        "bytes": float(weights),
        "dtypes": sorted(set(columns["dtype"])),
        "device_weights": float(device_weights),
        "device_gradients": float(device_gradients),
        "device_optimizer": float(opt_device),
        "device_total": float(device_weights + device_gradients + opt_device),
        "replicated_weights": float(weights),
        "replicated_gradients": float(trainable_bytes),
        "replicated_optimizer": float(opt_full),
        "replicated_total": float(weights + trainable_bytes + opt_full),
        "optimizer": None if opt is None else type(opt).__name__,
        "slots": (None if opt is None else
                  float(n_slots / len(trainable)) if trainable else 0.0),
        "devices": n_devices,
        "batch_dim_name": batch_dim_name,
        "batch_ways": batch_ways,
        "batch_size": batch_size,
        "device_batch": (None if batch_size is None or not batch_ways
                         else float(batch_size / batch_ways)),
        "unmatched": unmatched,
    }
    rules = {"key": keys,
             "axes": [list(layout_map[k].axes) for k in keys],
             "variables": [used[k] for k in keys]}
    return {"variables": columns, "problems": problems, "groups": groups,
            "outputs": outputs["rules"], "rules": rules,
            "summary": summary, "mesh": describe_mesh(mesh)}


# --------------------------------------------------------------------------
# Checks for code outside R: at variable creation (before training: guard.py)


def first_error(problems: Iterable[dict]) -> KerasmeshError | None:
    """The first problem that would crash, as a KerasmeshError."""
    for p in problems:
        if p["severity"] == ERROR:
            return KerasmeshError(p["kind"], p["message"],
                                  [tuple(b) for b in p["bullets"]])
    return None


def warn_problems(problems: Iterable[dict]) -> None:
    """Python warnings for the problems that would silently mis-shard."""
    for p in problems:
        if p["severity"] == WARNING:
            text = p["message"] + "".join(f"\n{n} {t}"
                                          for n, t in p["bullets"])
            warnings.warn(text, KerasmeshLayoutWarning, stacklevel=3)


def check_layout(model: Any, layout: Any, batch_size: Any = None,
                 optimizer: Any = None, batch_dim_name: str | None = None
                 ) -> dict:
    """`plan_layout()`, raising the first error and warning the rest."""
    plan = plan_layout(model, layout, batch_size, optimizer, batch_dim_name)
    error = first_error(plan["problems"])
    warn_problems(plan["problems"])
    if error is not None:
        raise error
    return plan


@functools.lru_cache(maxsize=None)
def checked_model_parallel_class() -> type:
    """A ModelParallel that checks each variable's layout as it is created.

    Keras fails inside JAX, without the variable's path, when a layout is
    longer than a variable's rank or can't divide a dimension, and with a
    bare ValueError when several rules match. This subclass raises the
    plan's `KerasmeshError` (naming the variable and the rule) instead.
    """
    from keras.distribution import ModelParallel

    class CheckedModelParallel(ModelParallel):
        def get_variable_layout(self, variable):
            if getattr(variable, "_layout", None) is None:
                self._kerasmesh_check(variable)
            return super().get_variable_layout(variable)

        def _kerasmesh_check(self, variable):
            resolver = getattr(self, "_kerasmesh_resolver", None)
            if resolver is None:
                resolver = RuleResolver(rule_keys(self._layout_map))
                self._kerasmesh_resolver = resolver
            mesh = self.device_mesh
            sizes = {str(a): int(s)
                     for a, s in zip(mesh.axis_names, mesh.shape)}
            _, placed = _resolve(resolver, self._layout_map, variable.path,
                                 _shape(variable), sizes,
                                 math.prod(sizes.values()))
            error = first_error(placed["problems"])
            if error is not None:
                raise error

    return CheckedModelParallel


def checked_model_parallel(layout_map: Any, batch_dim_name: str | None = None,
                           auto_shard_dataset: bool = True) -> Any:
    """A `CheckedModelParallel` distribution."""
    require_backend(("jax",), "A distribution")
    cls = checked_model_parallel_class()
    return cls(layout_map=layout_map, batch_dim_name=batch_dim_name,
               auto_shard_dataset=bool(auto_shard_dataset))
