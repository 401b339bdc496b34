"""The collectives of a compiled step, and the mesh axes each runs over.

`parse_collectives()` lists every collective of a module `hlo.parse()`
read, once per run (a loop's body counts once per trip), in program
order: synchronous ones (`all-reduce(...)`, XLA's CPU backend), the
asynchronous pairs GPU backends schedule (`all-gather-start` ...
`all-gather-done`, counted at their start) and collectives wrapped in
`async-start`. The bytes of one are the array each device takes part
with: its result, which for an all-gather is the gathered array, except
for a reduce-scatter, whose operand (the array it reduces) is its result
times the group size. The mesh axes a collective runs over are those
along which the devices of a group differ (`group_axes()`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from . import hlo
from .replica_groups import device_groups, group_axes
from .hlo import Array, Computation, Instruction, Module

COLLECTIVES = ("all-reduce", "all-gather", "reduce-scatter", "all-to-all",
               "collective-permute", "collective-broadcast")
# Asynchronous forms whose result is (operands, results, ...).
_PAIRED = ("all-gather", "reduce-scatter", "collective-permute",
           "all-to-all", "collective-broadcast")


def collective_of(module: Module, i: Instruction
                  ) -> tuple[str, Instruction] | None:
    """(the collective, the instruction whose attributes give its groups)
    when `i` starts or is one, else None (a `-done` is None)."""
    op = i.opcode
    if op.endswith("-start") and op[:-len("-start")] in COLLECTIVES:
        return op[:-len("-start")], i
    if op in COLLECTIVES:
        return op, i
    if op == "async-start":
        for name in i.called:
            inner = module.computations.get(name)
            for j in (inner.instructions if inner else []):
                if j.opcode in COLLECTIVES:
                    return j.opcode, j
    return None


def _parts(i: Instruction, collective: str
           ) -> tuple[list[Array] | None, list[Array]]:
    """(the arrays a collective reduces or sends, when its result says;
    the arrays it produces)."""
    result = i.result
    paired = i.opcode == "async-start" or (
        i.opcode.endswith("-start") and collective in _PAIRED)
    if paired and isinstance(result, tuple) and len(result) >= 2:
        return hlo.flatten(result[0]), hlo.flatten(result[1])
    return None, hlo.flatten(result)


def parse_collectives(text: str | Module, mesh_shape: Sequence[int],
                      axis_names: Sequence[str]) -> list[dict]:
    """Every collective of a compiled module (HLO text or parsed), in
    program order, once per run.

    Returns:
        One dict per collective run: `collective` (such as "all-reduce"),
        `shapes` and `dtypes` of the arrays it produces, `bytes` (the
        size of the array one device takes part with), `groups` (device
        ids), `axes` (the mesh axes it runs over), `names` (each array's
        name stack) and `instruction` (its name). An all-reduce that every
        device only slices its own part of is a reduce-scatter
        (`sliced_all_reduces()`).
    """
    module = text if isinstance(text, Module) else hlo.parse(text)
    n = math.prod(mesh_shape)
    runs = execution_counts(module)
    out = []
    names = [module.entry] + [n for n in module.computations
                              if n != module.entry]
    for name in names:
        c = module.computations[name]
        times = runs.get(name, 0)
        if not times:
            continue
        sliced = set(sliced_all_reduces(c, n))
        for i in c.instructions:
            found = collective_of(module, i)
            if found is None:
                continue
            collective, source = found
            sent, produced = _parts(i, collective)
            groups = device_groups(source.attrs, n)
            size = len(groups[0]) if groups else n
            if collective == "reduce-scatter":
                sent = sent or _operands(c, i)
                nbytes = sum(a.bytes for a in sent) if sent else \
                    sum(a.bytes for a in produced) * size
            else:
                nbytes = sum(a.bytes for a in produced)
            if i.name in sliced:
                collective = "reduce-scatter"
            op = {"collective": collective,
                  "shapes": [list(a.dims) for a in produced],
                  "dtypes": [a.dtype for a in produced],
                  "bytes": float(nbytes), "groups": groups,
                  "axes": group_axes(groups, mesh_shape, axis_names),
                  "names": hlo.op_names(source.attrs, len(produced)),
                  "instruction": i.name}
            out.extend(dict(op) for _ in range(times))
    return out


def _operands(c: Computation, i: Instruction) -> list[Array]:
    return [a for arrays in c.operand_arrays(i) for a in arrays]


def execution_counts(module: Module) -> dict[str, int]:
    """How many times each computation runs per run of the entry: loop
    bodies once per trip, what the entry calls once; reductions applied
    by an instruction (`to_apply`), fused computations and what an
    `async-start` wraps count as their caller's work, not as runs of
    their own."""
    counts: dict[str, int] = {module.entry: 1}
    order = [module.entry]
    while order:
        name = order.pop()
        c = module.computations.get(name)
        if c is None:
            continue
        for i in c.instructions:
            if i.opcode == "while":
                trips = hlo.loop_trips(module, i)
                targets = [(i.attr("body"), trips),
                           (i.attr("condition"), trips + 1)]
            elif i.opcode in ("call", "conditional"):
                targets = [(t, 1) for t in i.called]
            else:
                continue
            for target, k in targets:
                if target is None or target not in module.computations:
                    continue
                counts[target] = counts.get(target, 0) + counts[name] * k
                order.append(target)
    return counts


def sliced_all_reduces(c: Computation, n_devices: int) -> list[str]:
    """Which all-reduces of a computation GPUs run as reduce-scatters.

    XLA's SPMD partitioner writes a reduce-scatter as an all-reduce whose
    users each keep one device's part: a `dynamic-slice`, or a fusion
    given the `partition-id`, whose result is at most 1/(group size) of
    the all-reduce's. GPU and TPU pipelines turn that into a
    reduce-scatter (half a ring all-reduce's traffic); XLA's CPU pipeline
    keeps the all-reduce. Single-array all-reduces only.
    """
    candidates = {}
    for i in c.instructions:
        if i.opcode == "all-reduce" and isinstance(i.result, Array):
            groups = device_groups(i.attrs, n_devices)
            size = len(groups[0]) if groups else n_devices
            if size > 1:
                candidates[i.name] = (i.result.elements, size)
    if not candidates:
        return []
    sliced = dict.fromkeys(candidates, True)
    used = set()
    for i in c.instructions:
        operands = set(i.operands)
        for name in operands.intersection(candidates):
            elements, size = candidates[name]
            keeps_part = i.opcode == "dynamic-slice" or any(
                o.startswith("partition-id") for o in operands)
            used.add(name)
            kept = sum(a.elements for a in i.arrays)
            if not keeps_part or kept * size > elements:
                sliced[name] = False
    return sorted((k for k in candidates if k in used and sliced[k]),
                  key=lambda k: c.instructions.index(c.by_name[k]))


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
