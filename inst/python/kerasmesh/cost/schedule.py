"""The time of one compiled step, walked in the order it runs.

`walk()` runs through a compiled module's entry computation, each
instruction given its time by the time model (`topology/time.py`'s
`Rates`, from the work `operations.py` counts; a loop: its body's time
per trip).

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


def walk(module: Module, ops_by_instruction: dict[str, dict],
         rates: Rates) -> Walk:
    """The time of one run of `module`'s entry computation.

    Args:
        module: the compiled step, parsed.
        ops_by_instruction: {instruction name: its collective}
            (`collectives.parse_collectives()`'s dicts, by `instruction`).
        rates: what each operation's time comes from.
    """
    result = Walk()
    work = Operations(module)
    now, free = 0.0, 0.0
    running: dict[str, tuple[float, float, str]] = {}
    entry = module.entry_computation
    for i in entry.instructions:
        found = collective_of(module, i)
        if found is not None:
            op = ops_by_instruction.get(i.name)
            seconds = rates.collective(op) if op else 0.0
            axes = "+".join(op["axes"]) if op else ""
            begin = max(now, free)
            free = begin + seconds
            if _asynchronous(i):
                running[i.name] = (free, seconds, axes)
            else:
                result.add(result.exposed, axes, free - now)
                now = free
            continue
        if i.opcode.endswith("-done") and i.operands and \
                i.operands[0] in running:
            end, seconds, axes = running.pop(i.operands[0])
            waited = max(end - now, 0.0)
            result.add(result.exposed, axes, waited)
            result.add(result.hidden, axes, seconds - waited)
            now = max(now, end)
            continue
        w = work.work(entry, i)
        if w.kind == NONE:
            continue
        seconds = _loop_seconds(module, work, i, rates) \
            if i.opcode == "while" else rates.seconds(w.kind, w.flops,
                                                      w.bytes)
        result.add(result.compute, w.kind, seconds)
        now += seconds
    for end, seconds, axes in running.values():
        result.add(result.exposed, axes, max(end - now, 0.0))
        now = max(now, end)
    result.total = now
    return result


def _asynchronous(i: hlo.Instruction) -> bool:
    """Whether a collective runs beside the compute: an asynchronous pair
    the compiler did not mark synchronous (`"is_sync":true`, which XLA's
    GPU compiler gives collectives it runs on the compute stream)."""
    started = i.opcode.endswith("-start") or i.opcode == "async-start"
    return started and '"is_sync":true' not in i.attrs


def _loop_seconds(module: Module, work: Operations, loop: hlo.Instruction,
                  rates: Rates) -> float:
    """A loop's time: its body's operations, every trip."""
    body = module.computations.get(loop.attr("body") or "")
    if body is None:
        return 0.0
    trips = hlo.loop_trips(module, loop)
    seconds = 0.0
    for i in body.instructions:
        w = work.work(body, i)
        if w.kind == NONE:
            continue
        seconds += _loop_seconds(module, work, i, rates) \
            if i.opcode == "while" else rates.seconds(w.kind, w.flops,
                                                      w.bytes)
    return trips * seconds


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

