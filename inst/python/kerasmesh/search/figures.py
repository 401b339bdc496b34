"""The figures a search judges a candidate by, from one compiled step.

`figures()` reads a `cost.layout_cost()` result: XLA's per-device memory
(`need`, what decides a fit), the collectives' bytes by mesh axes, the
FLOPs, the step's levers, the reshardings XLA reported and, on a
topology, the modeled seconds per global batch for each device order
(`topology.time.step_time()`, the one time model: the compile's
collectives with each order's nodes). `extrapolate()` takes figures at 1
and 2 blocks to the full depth, every figure on a line:
`f(L) = f(1) + (L - 1) * (f(2) - f(1))`; `between()` puts a remat blended
over the blocks on the line between its two choices' figures.
"""

from __future__ import annotations

from ..topology.machine import Topology
from ..topology.time import step_time

# Modeled time is raised by this share for a layout XLA reshards by
# replicating tensors (it holds and moves more than its collectives say).
RESHARD_PENALTY = 0.1


def reshardings(r: dict) -> int:
    """How many tensors XLA replicated in full to reshard them."""
    rows = r.get("reshardings") or {}
    if isinstance(rows, dict):
        return len(rows.get("op_name", []))
    return len(rows)


def figures(r: dict, topology: Topology | None = None,
            nodes: dict[str, list[int]] | None = None) -> dict:
    """The figures of one `layout_cost()` result.

    Args:
        r: the cost.
        topology: the machine, or None.
        nodes: {device order: node of each mesh position}, for `times`.

    Returns:
        `memory` (XLA's need), `traffic`, `by_axes`, `flops`,
        `activations` (XLA's temporaries and the batch: what shrinks with
        the micro-batch), `gradients` (trainable bytes per device: what
        accumulators add), `steps` and `remat` (the levers),
        `reshardings`, and `times` ({order: seconds per global batch}, on
        a topology).
    """
    by_axes: dict[str, float] = {}
    for axes, b in zip(r["collectives"]["axes"], r["collectives"]["bytes"]):
        by_axes[axes] = by_axes.get(axes, 0.0) + b
    memory = r.get("memory") or {}
    out = {"memory": r["need"], "traffic": sum(by_axes.values()),
           "by_axes": by_axes, "flops": r.get("flops", 0.0),
           "activations": float(memory.get("activations", 0.0) +
                                memory.get("inputs", 0.0)),
           "gradients": float((r.get("plan") or {}).get(
               "device_gradients", 0.0)),
           "steps": int(r.get("accumulation_steps", 1) or 1),
           "remat": r.get("remat", "none"),
           "reshardings": reshardings(r)}
    if topology is not None and nodes:
        out["times"] = {
            order: step_time(r.get("ops", []), r.get("flops", 0.0),
                             topology, n, r.get("compute_dtype", "float32"),
                             accumulation_steps=out["steps"])["total"]
            for order, n in nodes.items()}
    return out


def extrapolate(f1: dict, f2: dict, depth: int) -> dict:
    """Figures at `depth` blocks from those at 1 and 2 blocks."""
    return _on_line(f1, f2, depth - 1)


def between(a: dict, b: dict, share: float) -> dict:
    """Figures `share` of the way from `a` to `b`: those of a remat that
    is `b`'s on that share of the blocks and `a`'s on the others (both at
    the same micro-batches)."""
    return _on_line(a, b, share)


def _on_line(f1: dict, f2: dict, t: float) -> dict:
    """Every figure at `f1 + t * (f2 - f1)`; the others are `f2`'s."""
    def line(a: float, b: float) -> float:
        return a + t * (b - a)

    axes = set(f1["by_axes"]) | set(f2["by_axes"])
    by_axes = {a: line(f1["by_axes"].get(a, 0.0), f2["by_axes"].get(a, 0.0))
               for a in axes}
    out = dict(f2)
    out.update({k: line(f1[k], f2[k]) for k in
                ("memory", "flops", "activations", "gradients")})
    out.update({"traffic": sum(by_axes.values()), "by_axes": by_axes,
                "reshardings": max(f1["reshardings"], f2["reshardings"])})
    if "times" in f1:
        out["times"] = {o: line(f1["times"][o], f2["times"][o])
                        for o in f1["times"]}
    return out


def bandwidth_time(f: dict, bandwidth: dict, flop_rate: float) -> float:
    """Seconds per global batch without a topology: each collective's
    bytes over the slowest of its axes' bandwidths (bytes/s), plus FLOPs
    over `flop_rate`, once per micro-batch."""
    seconds = 0.0
    for axes, b in f["by_axes"].items():
        if axes:
            seconds += b / min(bandwidth[a] for a in axes.split("+"))
    return f["steps"] * (seconds + f["flops"] / flop_rate)


def best_order(f: dict) -> str | None:
    """The device order with the least modeled time, or None."""
    times = f.get("times")
    if not times:
        return None
    return min(times, key=lambda o: (times[o], o))
