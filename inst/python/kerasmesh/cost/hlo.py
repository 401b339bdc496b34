"""Collectives in compiled HLO text, and the mesh axes each runs over.

`compiled.as_text()` of a jitted function prints one instruction a line:

    %all-reduce.8 = (f32[], f32[16,32]{1,0}) all-reduce(%a, %b),
        channel_id=3, replica_groups={{0,4},{1,5},{2,6},{3,7}}, ...

XLA writes the device groups in one of three forms, all handled here:

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
row-major order: id `i` sits at `numpy.unravel_index(i, mesh_shape)`. The
mesh axes a collective runs over are those along which the devices of a
group differ.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence

COLLECTIVES = ("all-reduce", "all-gather", "reduce-scatter", "all-to-all",
         "collective-permute", "collective-broadcast")

_INSTRUCTION = re.compile(
    r"^\s*(?:ROOT\s+)?(?P<name>%?[\w.\-]+)\s*=\s*(?P<result>.+?)\s+"
    r"(?P<collective>" + "|".join(re.escape(k) for k in COLLECTIVES) +
    r")(?P<start>-start)?\([^)]*\)(?P<attrs>.*)$")
_ARRAY = re.compile(r"\b(?P<dtype>[a-z]+[0-9]*(?:e[0-9]m[0-9][a-z0-9]*)?)"
                    r"\[(?P<dims>[0-9,]*)\]")
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
_ANY_INSTRUCTION = re.compile(
    r"^\s*(?:ROOT\s+)?%?[\w.\-]+\s*=\s*(?P<result>.+?)\s+"
    r"(?P<opcode>[\w\-]+)\((?P<rest>.*)$")
_OPERAND = re.compile(r"%[\w.\-]+")
_OP_NAME = re.compile(r'metadata=\{[^}]*?\bop_name="(?P<name>(?:[^"\\]|\\.)*)"')

_BYTES = {"pred": 1, "s4": 1, "u4": 1, "s8": 1, "u8": 1, "s16": 2,
          "u16": 2, "f16": 2, "bf16": 2, "s32": 4, "u32": 4, "f32": 4,
          "s64": 8, "u64": 8, "f64": 8, "c64": 8, "c128": 16}


def element_bytes(dims: Sequence[int], dtype: str) -> float:
    """Bytes of one array of shape `dims` and HLO type `dtype`."""
    size = _BYTES.get(dtype)
    if size is None:
        bits = re.search(r"([0-9]+)", dtype)
        size = max(1, int(bits.group(1)) // 8) if bits else 4
    return float(math.prod(dims) * size)


def array_bytes(text: str) -> tuple[float, list[list[int]], list[str]]:
    """Total bytes, shapes and dtypes of the arrays named in `text`."""
    total, shapes, dtypes = 0.0, [], []
    for m in _ARRAY.finditer(text):
        dtype = m.group("dtype")
        dims = [int(d) for d in m.group("dims").split(",") if d]
        total += element_bytes(dims, dtype)
        shapes.append(dims)
        dtypes.append(dtype)
    return total, shapes, dtypes


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
        groups = _groups_of(m.group("body"))
        return [g for g in groups if g]
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


def parse_collectives(text: str, mesh_shape: Sequence[int],
                      axis_names: Sequence[str]) -> list[dict]:
    """Every collective in compiled HLO text, in program order.

    Returns:
        One dict per instruction: `collective` (such as "all-reduce"), `shapes`
        and `dtypes` of its result arrays, `bytes` (the size of the array
        one device takes part with: its result, which for an all-gather is
        the gathered array, except for a reduce-scatter, whose operand,
        the array it reduces, is its result times the group size),
        `groups` (device ids) and `axes` (the mesh axes it runs over). An
        all-reduce that every device only slices its own part of is a
        reduce-scatter (`sliced_all_reduces()`).
    """
    n = math.prod(mesh_shape)
    out = []
    names = []
    for line in text.splitlines():
        if "(" not in line or not any(k in line for k in COLLECTIVES):
            continue
        m = _INSTRUCTION.match(line)
        if not m:
            continue
        collective = m.group("collective")
        result, shapes, dtypes = array_bytes(m.group("result"))
        groups = device_groups(m.group("attrs"), n)
        if collective == "reduce-scatter":
            result *= len(groups[0]) if groups else n
        out.append({
            "collective": collective,
            "shapes": shapes,
            "dtypes": dtypes,
            "bytes": float(result),
            "groups": groups,
            "axes": group_axes(groups, mesh_shape, axis_names),
            "names": op_names(m.group("attrs"), len(shapes)),
        })
        names.append(m.group("name").lstrip("%"))
    for i in sliced_all_reduces(text, out, names, n):
        out[i]["collective"] = "reduce-scatter"
    return out


def _elements(text: str) -> int:
    return sum(math.prod(int(d) for d in m.group("dims").split(",") if d)
               for m in _ARRAY.finditer(text))


def sliced_all_reduces(text: str, ops: Sequence[dict],
                       names: Sequence[str], n_devices: int) -> list[int]:
    """Which of `ops` are all-reduces that GPUs run as reduce-scatters.

    XLA's SPMD partitioner writes a reduce-scatter as an all-reduce whose
    users each keep one device's part: a `dynamic-slice`, or a fusion
    given the `partition-id`, whose result is at most 1/(group size) of
    the all-reduce's. GPU and TPU pipelines turn that into a
    reduce-scatter (half a ring all-reduce's traffic); XLA's CPU pipeline
    keeps the all-reduce. Single-array all-reduces only.
    """
    candidates = {}
    for i, (op, name) in enumerate(zip(ops, names)):
        if op["collective"] == "all-reduce" and len(op["shapes"]) == 1:
            size = len(op["groups"][0]) if op["groups"] else n_devices
            if size > 1:
                candidates["%" + name] = (i, math.prod(op["shapes"][0]), size)
    if not candidates:
        return []
    sliced = dict.fromkeys(candidates, True)
    used = set()
    for line in text.splitlines():
        if "%" not in line or "=" not in line:
            continue
        m = _ANY_INSTRUCTION.match(line)
        if not m:
            continue
        operands = set(_OPERAND.findall(m.group("rest")))
        for name in operands.intersection(candidates):
            _, elements, size = candidates[name]
            keeps_part = m.group("opcode") == "dynamic-slice" or any(
                o.startswith("%partition-id") for o in operands)
            used.add(name)
            if not keeps_part or _elements(m.group("result")) * size > \
                    elements:
                sliced[name] = False
    return sorted(candidates[k][0] for k in candidates
                  if k in used and sliced[k])


def split_top(text: str, sep: str) -> list[str]:
    """`text` split at each `sep` outside parentheses."""
    parts, depth, start = [], 0, 0
    for i, ch in enumerate(text):
        depth += (ch == "(") - (ch == ")")
        if ch == sep and depth == 0:
            parts.append(text[start:i])
            start = i + 1
    return parts + [text[start:]]


def op_names(attrs: str, n: int) -> list[str]:
    """The name stack of each of a collective's `n` result arrays.

    XLA's metadata gives one `op_name` per instruction; a collective that
    XLA combined from several writes theirs as `prefix/(a:b:...)`, one
    name per operand in order. When the names are as many as the arrays,
    each array gets `prefix/` and its own; when they are not, none (which
    is whose is unknown). One name: every array gets it. No metadata:
    empty names.
    """
    m = _OP_NAME.search(attrs)
    name = m.group("name") if m else ""
    *outer, last = split_top(name, "/")
    if last.startswith("(") and last.endswith(")"):
        parts = split_top(last[1:-1], ":")
        if len(parts) == n:
            return ["/".join(outer + [p]) for p in parts]
        if len(parts) > 1:
            return [""] * n
    return [name] * n


def summarise_collectives(ops: Sequence[dict]) -> dict:
    """Collectives by what they do and their mesh axes, as columns.

    Returns:
        {"collective", "axes" (axes joined with "+"; "" for none), "count",
        "bytes" (per device per step)}, sorted by bytes, largest first.
    """
    table: dict[tuple[str, str], list[float]] = {}
    for op in ops:
        key = (op["collective"], "+".join(op["axes"]))
        row = table.setdefault(key, [0, 0.0])
        row[0] += 1
        row[1] += op["bytes"]
    keys = sorted(table, key=lambda k: (-table[k][1], k))
    return {"collective": [k[0] for k in keys], "axes": [k[1] for k in keys],
            "count": [int(table[k][0]) for k in keys],
            "bytes": [float(table[k][1]) for k in keys]}
