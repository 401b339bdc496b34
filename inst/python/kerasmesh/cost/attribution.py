"""Collective bytes attributed to the variables and layers they move.

Every collective in the compiled HLO carries XLA's `op_name` metadata:
JAX's name stack of the operation it came from, such as
`jit(step)/transpose(jvp(sequential))/dense/dot_general`. Keras opens a
name scope per layer call, so the layers' names sit in that stack, wrapped
in the transformations JAX applied (`jvp(...)`, `transpose(...)`). This
module unwraps a stack into its scope path (`sequential/dense`), matches
that path against the layers the model's variable paths name, and, within
the matched layer, the array against the layer's variables by size (a
gradient or a gathered weight has the variable's elements, on one device
or in all). Matching is by path and size, never by position; what matches
no layer, or several equally, stays unattributed and is counted as such.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence

from . import hlo

_FUNCTION = re.compile(r"^p?jit\(.*\)$")
_WRAPPED = re.compile(r"^[\w.\-]*\((?P<inner>.*)\)$")


def _components(text: str) -> list[str]:
    out: list[str] = []
    for part in hlo.split_top(text, "/"):
        if _FUNCTION.match(part):
            continue
        m = _WRAPPED.match(part)
        while m:
            part = m.group("inner")
            m = _WRAPPED.match(part)
        out += _components(part) if "/" in part else [part] if part else []
    return out


def scope_path(name: str) -> list[str]:
    """The name scopes of an `op_name`, transformations unwrapped.

    The last component (the primitive) and the jitted function's name
    (`jit(step)`) are dropped: `jit(step)/transpose(jvp(a/b))/c/dot_general`
    gives `["a", "b", "c"]`.
    """
    return _components("/".join(hlo.split_top(name, "/")[:-1]))


class Layers:
    """The model's layer paths (tuples), indexed by their endings."""

    def __init__(self, paths: set):
        self.paths = paths
        self.ending: dict[tuple, list] = {}
        for p in paths:
            for j in range(1, len(p) + 1):
                self.ending.setdefault(p[-j:], []).append(p)
        self.seen: dict[tuple, tuple | None] = {}

    def match(self, scope: Sequence[str]) -> tuple | None:
        """The layer (a path tuple) a scope path runs in, or None.

        The longest leading part of `scope` that names one layer wins: a
        layer's path equal to it, else the one layer whose path ends with
        it (the model's name before it), else the one it ends with.
        Several layers equally good: None (ambiguous, not guessed).
        """
        key = tuple(scope)
        if key not in self.seen:
            self.seen[key] = self._match(key)
        return self.seen[key]

    def _match(self, scope: tuple) -> tuple | None:
        for k in range(len(scope), 0, -1):
            part = scope[:k]
            if part in self.paths:
                return part
            for found in (self.ending.get(part, []),
                          [part[-j:] for j in range(1, k)
                           if part[-j:] in self.paths]):
                if len(found) == 1:
                    return found[0]
                if found:
                    return None
        return None


def _owners(variables: dict) -> tuple[dict, Layers]:
    """{layer path tuple: [(variable path, (shard elements, elements,
    rank))]}, and every layer path (owners and the layers around them)."""
    owners: dict[tuple, list] = {}
    for path, shape, shard in zip(variables["path"], variables["shape"],
                                  variables["shard_shape"]):
        parts = tuple(path.split("/"))
        counts = (math.prod(int(d) for d in shard),
                  math.prod(int(d) for d in shape), len(shape))
        owners.setdefault(parts[:-1], []).append((path, counts))
    layers = {o[:k] for o in owners for k in range(1, len(o) + 1)}
    return owners, Layers(layers)


def _variable_of(owned: list, elements: int, group: int,
                 rank: int | None = None, gather: bool = True) -> str | None:
    """The one variable of a layer an array of `elements` (and `rank`)
    is: first one of its rank with that many elements in its shard or
    whole (a kernel's gradient is no bias of as many elements), then one
    of any rank; for a gather (`gather`), then a shard times the group (a
    partial gather). None when none or several fit: an activation, or a
    part of a gradient that XLA split, stays the layer's alone."""
    tiers = [lambda shard, full, r: elements in (shard, full) and r == rank,
             lambda shard, full, r: elements in (shard, full)]
    if gather:
        tiers.append(lambda shard, full, r: elements == shard * group)
    for fits in tiers:
        found = [path for path, counts in owned if fits(*counts)]
        if found:
            return found[0] if len(found) == 1 else None
    return None


def gathers(op: dict) -> bool:
    """Whether a collective gathers (a weight's shards into a part or the
    whole of it), rather than reducing or moving whole arrays."""
    return "gather" in op["collective"]


def moves_weights(ops: Sequence[dict], variables: dict) -> list[bool]:
    """For each collective, whether an array it moves is a variable's (a
    weight gathered, its gradient reduced), by its layer and size as
    `attribute()` matches them. A collective whose arrays name no layer
    (XLA's combiners drop the names of what they combine) moves
    variables when each of its arrays has the size of one."""
    owners, layers = _owners(variables)
    every = [v for owned in owners.values() for v in owned]
    out = []
    for op in ops:
        group = len(op["groups"][0]) if op["groups"] else 1
        found, named = False, False
        for shape, name in zip(op["shapes"], op["names"]):
            layer = layers.match(scope_path(name))
            named = named or layer is not None
            if layer is not None and _variable_of(
                    owners.get(layer, []), math.prod(shape), group,
                    len(shape), gathers(op)):
                found = True
                break
        if not named and op["shapes"]:
            found = all(_sized_like(every, math.prod(shape), group)
                        for shape in op["shapes"])
        out.append(found)
    return out


def _sized_like(owned: list, elements: int, group: int) -> bool:
    """Whether some variable's shard, whole or gathered part has
    `elements` elements."""
    return any(elements in (shard, full, shard * group)
               for _, (shard, full, _rank) in owned)


def attribute(ops: Sequence[dict], variables: dict) -> dict:
    """Collective bytes per variable and per layer.

    Args:
        ops: `collectives.parse_collectives()`'s collectives (with
            `names`).
        variables: the plan's variable columns (`path`, `shape`,
            `shard_shape`).

    Returns:
        {"variables": {"path", "layer", "bytes"}, "layers": {"layer",
        "bytes"}, each sorted by bytes, largest first; "total" (all
        collective bytes per device per step), "to_variables" and
        "to_layers" (the bytes attributed to some variable, some layer)}.
    """
    owners, layers = _owners(variables)
    by_variable: dict[str, list] = {}
    by_layer: dict[str, float] = {}
    total = to_variables = to_layers = 0.0
    for op in ops:
        sizes = [hlo.element_bytes(s, d)
                 for s, d in zip(op["shapes"], op["dtypes"])]
        scale = op["bytes"] / sum(sizes) if sum(sizes) > 0 else 0.0
        group = len(op["groups"][0]) if op["groups"] else 1
        total += op["bytes"]
        for shape, size, name in zip(op["shapes"], sizes, op["names"]):
            layer = layers.match(scope_path(name))
            if layer is None:
                continue
            size *= scale
            label = "/".join(layer)
            by_layer[label] = by_layer.get(label, 0.0) + size
            to_layers += size
            var = _variable_of(owners.get(layer, []), math.prod(shape),
                               group, len(shape), gathers(op))
            if var is not None:
                by_variable.setdefault(var, [label, 0.0])[1] += size
                to_variables += size
    vs = sorted(by_variable, key=lambda v: (-by_variable[v][1], v))
    ls = sorted(by_layer, key=lambda v: (-by_layer[v], v))
    return {
        "variables": {"path": vs, "layer": [by_variable[v][0] for v in vs],
                      "bytes": [float(by_variable[v][1]) for v in vs]},
        "layers": {"layer": ls, "bytes": [float(by_layer[v]) for v in ls]},
        "total": float(total), "to_variables": float(to_variables),
        "to_layers": float(to_layers),
    }
