"""The device groups of a collective, from any of XLA's three forms.

* explicit: `replica_groups={{0,4},{1,5},{2,6},{3,7}}`;
* iota: `replica_groups=[4,2]<=[2,4]T(1,0)`, the numbers 0..n-1 reshaped
  to the dimensions after `<=`, transposed by `T(...)` when given, and
  reshaped to `[groups, group size]`;
* mesh: `replica_groups=mesh['axis_0'=2,'axis_1'=4] {'axis_1'}`, XLA's
  own mesh of device ids 0..n-1 in row-major order, grouped along the
  axes in braces;

and `collective-permute` gives `source_target_pairs={{0,4},{1,5},...}`.
Device ids are positions in the compiled program's device assignment,
which for arrays placed with a `NamedSharding` is the mesh's devices in
row-major order: id `i` sits at `numpy.unravel_index(i, mesh_shape)`;
the mesh axes a group runs over are those along which its devices differ
(`group_axes()`).
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence

_EXPLICIT = re.compile(r"replica_groups=\{(?P<body>(?:\{[0-9,\s]*\},?)*)\}")
_IOTA = re.compile(r"replica_groups=\[(?P<shape>[0-9,]+)\]<=\[(?P<dims>[0-9,]+)"
                   r"\](?:T\((?P<perm>[0-9,]+)\))?")
_MESH = re.compile(r"replica_groups=mesh\[(?P<axes>[^\]]*)\]\s*"
                   r"\{(?P<over>[^}]*)\}")
_MESH_AXIS = re.compile(r"'(?P<name>[^']+)'\s*=\s*(?P<size>[0-9]+)")
_SUB_AXIS = re.compile(r"'([^']+)'\s*:\s*\(([0-9]+)\)([0-9]+)")
_QUOTED = re.compile(r"'([^']+)'")
_PAIRS = re.compile(r"source_target_pairs=\{(?P<body>(?:\{[0-9,\s]*\},?)*)\}")
_GROUP = re.compile(r"\{([0-9,\s]*)\}")


def _groups_of(body: str) -> list[list[int]]:
    return [[int(i) for i in g.split(",") if i.strip()]
            for g in _GROUP.findall(body)]


def device_groups(attrs: str, n_devices: int) -> list[list[int]]:
    """The device groups of one collective, from any of XLA's forms.

    An empty list means one group of all devices (XLA's `{}`).
    """
    import numpy as np

    m = _MESH.search(attrs)
    if m:
        return _mesh_groups(m.group("axes"), m.group("over"))
    m = _IOTA.search(attrs)
    if m:
        shape = [int(s) for s in m.group("shape").split(",")]
        dims = [int(s) for s in m.group("dims").split(",")]
        ids = np.arange(math.prod(dims)).reshape(dims)
        if m.group("perm"):
            ids = np.transpose(ids, [int(p) for p in
                                     m.group("perm").split(",")])
        return ids.reshape(shape).tolist()
    m = _EXPLICIT.search(attrs)
    if m:
        return [g for g in _groups_of(m.group("body")) if g]
    m = _PAIRS.search(attrs)
    if m:
        return _groups_of(m.group("body"))
    return []


def _mesh_groups(axes_text: str, over_text: str) -> list[list[int]]:
    """Groups from XLA's mesh form, sub-axes (`'x':(k)m`) included.

    A sub-axis `'x':(k)m` is the part of size m of axis x after a major
    part of size k: x's dimension is split into (k, m, rest) and the
    middle one is grouped over.
    """
    import numpy as np

    axes = _MESH_AXIS.findall(axes_text)
    dims: list[int] = []
    where: dict[str, int] = {}
    subs = {n: (int(k), int(m)) for n, k, m in _SUB_AXIS.findall(over_text)}
    for name, size in axes:
        size = int(size)
        where[name] = len(dims)
        if name in subs:
            k, m = subs[name]
            dims += [k, m, size // (k * m)]
        else:
            dims.append(size)
    over = [n for n in _QUOTED.findall(over_text) if n in where]
    moved = [where[n] + (1 if n in subs else 0) for n in over]
    rest = [d for d in range(len(dims)) if d not in moved]
    ids = np.arange(math.prod(dims)).reshape(dims)
    size = math.prod(dims[d] for d in moved)
    return np.transpose(ids, rest + moved).reshape(-1, size).tolist()


def group_axes(groups: Sequence[Sequence[int]], mesh_shape: Sequence[int],
               axis_names: Sequence[str]) -> list[str]:
    """The mesh axes along which the devices of each group differ."""
    import numpy as np

    n = math.prod(mesh_shape)
    if not groups:
        return [a for a, s in zip(axis_names, mesh_shape) if s > 1]
    varying: set[int] = set()
    for group in groups:
        ids = [i for i in group if 0 <= i < n]
        if len(ids) < 2:
            continue
        coords = np.array(np.unravel_index(ids, tuple(mesh_shape))).T
        for d in range(len(mesh_shape)):
            if len(set(coords[:, d].tolist())) > 1:
                varying.add(d)
    return [axis_names[d] for d in sorted(varying)]
