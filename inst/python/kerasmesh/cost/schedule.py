"""The time of one compiled step, walked in the order it runs.

`trace()` turns a compiled module's entry computation into the entries
the time depends on, in the order they run (the work `operations.py`
counts, and where each collective starts and ends), plain values that
keep; `walk()` runs through them, each operation given its time by the
time model (`topology/time.py`'s `Rates`; a loop: its body's time per
trip), at the compiled micro-batch or another (`scale`).

A device computes one operation at a time, and runs collectives one at
a time beside it. A collective the compiler made asynchronous (a GPU
compile's `all-gather-start` ... `all-gather-done`) starts when both the
device has reached its start and the previous collective has ended; the
device waits at its `-done` only for what is left of it. So the compute
scheduled between the two hides it, as XLA's latency-hiding scheduler
intends. A synchronous collective (XLA's CPU backend, and those XLA's GPU
compiler marks `is_sync`) is waited for where it stands: on a CPU
compile, `overlap_by_class()` then says what a GPU would hide.

The result separates each collective's time into what the device waited
for (exposed) and what ran under compute (hidden), by the mesh axes it
runs over.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from . import hlo
from .collectives import collective_of
from .hlo import Module
from .operations import Operations
from ..topology.time import NONE, Rates


@dataclass
class Walk:
    """A step's time: the device's `compute` by kind, and each
    collective's time `exposed` (waited for) and `hidden` (under
    compute), by its axes ("+"-joined); `total` is when the last
    operation ends."""

    compute: dict[str, float] = field(default_factory=dict)
    exposed: dict[str, float] = field(default_factory=dict)
    hidden: dict[str, float] = field(default_factory=dict)
    total: float = 0.0

    def add(self, table: dict, key: str, seconds: float) -> None:
        table[key] = table.get(key, 0.0) + seconds


def trace(module: Module, ops: list[dict]) -> list:
    """A compiled step's entry computation as the walk needs it: plain,
    JSON-ready entries in the order they run.

    Args:
        module: the compiled step, parsed.
        ops: its collectives (`collectives.parse_collectives()`'s dicts,
            each with the `instruction` it came from).

    Returns:
        Entries: `["c", kind, flops, bytes]` an operation (its work:
        `operations.py`); `["l", trips, [entries]]` a loop; `["s", k]` the
        start of collective `ops[k]`, run beside compute, `["d", k]` its
        end; `["y", k]` a collective waited for where it stands.
    """
    work = Operations(module)
    index = {op["instruction"]: k for k, op in enumerate(ops)}
    return _entries(module, module.entry_computation, work, index, True)


def _entries(module: Module, c: hlo.Computation, work: Operations,
             index: dict[str, int], entry: bool) -> list:
    out: list = []
    started: dict[str, int] = {}
    for i in c.instructions:
        if entry and collective_of(module, i) is not None:
            k = index.get(i.name)
            if k is None:
                continue
            if _asynchronous(i):
                started[i.name] = k
                out.append(["s", k])
            else:
                out.append(["y", k])
            continue
        if i.opcode.endswith("-done") and i.operands and \
                i.operands[0] in started:
            out.append(["d", started.pop(i.operands[0])])
            continue
        w = work.work(c, i)
        if w.kind == NONE:
            continue
        if i.opcode == "while":
            body = module.computations.get(i.attr("body") or "")
            if body is not None:
                out.append(["l", hlo.loop_trips(module, i),
                            _entries(module, body, work, index, False)])
            continue
        out.append(["c", w.kind, w.flops, w.bytes])
    return out + [["d", k] for k in started.values()]


def walk(entries: list, ops: list[dict], rates: Rates,
         scale: float = 1.0) -> Walk:
    """The time of one run of a step's `trace()`.

    Args:
        entries: the trace.
        ops: the step's collectives, as the trace numbers them, each with
            `weights` (whether it moves weights or their gradients) where
            known.
        rates: what each operation's time comes from.
        scale: the micro-batch over the one compiled: every operation's
            work, and the collectives of activations, scale with it; those
            of weights do not.
    """
    result = Walk()
    now, free = 0.0, 0.0
    running: dict[int, tuple[float, float, str]] = {}
    for e in entries:
        if e[0] in ("s", "y"):
            op = ops[e[1]]
            seconds = rates.collective(op) * (
                1.0 if op.get("weights") else scale)
            axes = "+".join(op["axes"])
            begin = max(now, free)
            free = begin + seconds
            if e[0] == "s":
                running[e[1]] = (free, seconds, axes)
            else:
                result.add(result.exposed, axes, free - now)
                now = free
        elif e[0] == "d":
            if e[1] not in running:
                continue
            end, seconds, axes = running.pop(e[1])
            waited = max(end - now, 0.0)
            result.add(result.exposed, axes, waited)
            result.add(result.hidden, axes, seconds - waited)
            now = max(now, end)
        else:
            kind, seconds = _seconds(e, rates, scale)
            result.add(result.compute, kind, seconds)
            now += seconds
    result.total = now
    return result


def _seconds(e: list, rates: Rates, scale: float) -> tuple[str, float]:
    """(kind, seconds) of an operation or a loop (its body's operations,
    every trip; the loop's kind its costliest part's)."""
    if e[0] == "c":
        return e[1], rates.seconds(e[1], scale * e[2], scale * e[3])
    parts: dict[str, float] = {}
    for inner in e[2]:
        if inner[0] in ("c", "l"):
            kind, seconds = _seconds(inner, rates, scale)
            parts[kind] = parts.get(kind, 0.0) + seconds
    if not parts:
        return NONE, 0.0
    kind = max(sorted(parts), key=lambda k: parts[k])
    return kind, e[1] * sum(parts.values())


def _asynchronous(i: hlo.Instruction) -> bool:
    """Whether a collective runs beside the compute: an asynchronous pair
    the compiler did not mark synchronous (`"is_sync":true`, which XLA's
    GPU compiler gives collectives it runs on the compute stream)."""
    started = i.opcode.endswith("-start") or i.opcode == "async-start"
    return started and '"is_sync":true' not in i.attrs


def overlap_by_class(result: Walk, weight_axes: dict[str, float]) -> Walk:
    """A CPU compile's walk, its collectives as a GPU would overlap them.

    XLA's CPU backend runs every collective where it stands. On a GPU,
    the latency-hiding scheduler moves the gathers of weights split over
    devices (fully sharded data parallelism) ahead of the compute that
    needs them, and the reductions of their gradients after the compute
    that makes them, so they run under the step's compute; collectives of
    activations inside a block (tensor parallelism) are needed at once,
    and stay exposed.

    Args:
        result: the walk of a CPU compile (every collective exposed).
        weight_axes: {axes: seconds of collectives that move weights or
            their gradients}, part of `result.exposed`.

    Returns:
        The walk with those seconds hidden up to the compute's time, the
        rest exposed.
    """
    compute = sum(result.compute.values())
    room = compute
    out = Walk(dict(result.compute), dict(result.exposed), {}, 0.0)
    for axes in sorted(weight_axes, key=lambda a: -weight_axes[a]):
        seconds = min(weight_axes[axes], out.exposed.get(axes, 0.0))
        hidden = min(seconds, room)
        room -= hidden
        out.exposed[axes] -= hidden
        out.add(out.hidden, axes, hidden)
    out.total = compute + sum(out.exposed.values())
    return out

