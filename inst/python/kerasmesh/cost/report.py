"""A compiled training step's cost, as plain values for R.

`report()` reads what XLA compiled (`layout_cost.py` compiles it): XLA's
per-device memory (`compiled.memory_analysis()`), the module's
floating-point operations (`operations.py`) and collectives
(`collectives.py`) from its HLO (`hlo.py`, read once), their bytes by
variable and layer (`attribution.py`), and with a topology the step's
modeled time (`step_time.py`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from . import attribution, collectives, hlo, precision, schedule, xla_log
from .attention import AS_WRITTEN
from .operations import step_flops
from .recompute import StepLevers
from .step import StepSpecs, shard_bytes
from .step_time import step_time
from .target import Target
from ..core import fits
from ..core.kinds import WARNING
from ..core.placement import mesh_sizes
from ..mesh.device_mesh import describe_mesh
from ..topology.machine import Topology


def versions() -> dict:
    """The versions of Keras, JAX, jaxlib and XLA's backend."""
    import jax
    import jaxlib
    import keras

    backend = jax.devices()[0].client
    return {"keras": keras.__version__, "jax": jax.__version__,
            "jaxlib": jaxlib.__version__,
            "xla": str(backend.platform_version).splitlines()[0]}


@dataclass
class CompiledStep:
    """What one compiled training step reports from.

    Attributes:
        compiled: JAX's compiled step.
        planned: the plan (`plan.plan_layout()`'s dict).
        specs: the step's arguments (`step.StepSpecs`).
        distribution: "data_parallel" or "model_parallel".
        batch_dim: the batch axis.
        keras_mesh: the user's Keras DeviceMesh (the one the cost names,
            whatever devices the target compiled for).
        seconds: how long lowering and compiling took.
        levers: the step's rematerialization and micro-batches.
        target: what compiled it (`target.py`).
        bfloat16: (what the compile did with bfloat16, the module
            `precision.retype_bfloat16()` replaced, or None).
        log: what XLA wrote while compiling (`xla_log.parse()`).
        dtype: the model's compute dtype.
        machine: (Topology, node of each mesh position), or None.
        attention: how Keras's attention was costed (`attention.py`).
        keep_trace: whether the cost keeps the step's schedule
            (`schedule.trace()`) and marks the collectives that move
            weights, for a search to walk again on other machines.
    """

    compiled: Any
    planned: dict
    specs: StepSpecs
    distribution: str
    batch_dim: str
    keras_mesh: Any
    seconds: float
    levers: StepLevers
    target: Target
    bfloat16: tuple = (precision.ABSENT, None)
    log: dict | None = None
    dtype: str = "float32"
    machine: tuple[Topology, list[int]] | None = None
    attention: str = AS_WRITTEN
    keep_trace: bool = False


def report(step: CompiledStep) -> dict:
    """The cost of a compiled step as plain values (`layout_cost()`)."""
    from keras import tree

    compiled, planned, specs = step.compiled, step.planned, step.specs
    sizes = mesh_sizes(step.keras_mesh)
    inputs = specs.inputs
    stats = compiled.memory_analysis()
    xla = {k: float(getattr(stats, f"{k}_size_in_bytes", 0) or 0) for k in
           ("argument", "output", "alias", "temp", "generated_code")}
    xla["total"] = fits.xla_total(xla)
    summary = planned["summary"]
    data = sum(shard_bytes(s) for s in tree.flatten(specs.xs)) + \
        sum(shard_bytes(s) for s in specs.ys if s is not None)
    memory = {
        "weights": summary["device_weights"],
        "optimizer": summary["device_optimizer"],
        "inputs": float(data),
        "activations": xla["temp"],
        "outputs": max(0.0, xla["output"] - xla["alias"]),
    }
    memory["total"] = float(sum(memory.values()))
    module = hlo.parse(compiled.as_text())
    flops = step_flops(module)
    ops = precision.rename_dtypes(
        collectives.parse_collectives(module, list(sizes.values()),
                                      list(sizes)),
        step.bfloat16[1])
    weights = attribution.moves_weights(ops, planned["variables"])
    kept = {}
    if step.keep_trace:
        kept["trace"] = schedule.trace(module, ops)
        for op, moves in zip(ops, weights):
            op["weights"] = moves
    return _extras(step, module, ops, weights) | kept | {
        "memory": memory,
        "xla": xla,
        "need": fits.need(xla),
        "collectives": collectives.summarise_collectives(ops),
        "ops": [{k: v for k, v in op.items() if k != "instruction"}
                for op in ops],
        "attribution": attribution.attribute(ops, planned["variables"]),
        "plan": summary,
        "warnings": [p["message"] for p in planned["problems"]
                     if p["severity"] == WARNING],
        "mesh": describe_mesh(step.keras_mesh),
        "distribution": step.distribution,
        "batch_dim_name": step.batch_dim,
        "batch_size": step.levers.batch_size,
        "inputs": {"name": [f.name for f in inputs],
                   "shape": [[float(d) for d in f.shape] for f in inputs],
                   "dtype": [f.dtype for f in inputs]},
        "loss": specs.loss_text,
        "compile_seconds": float(step.seconds),
        "flops": flops,
        "versions": versions(),
        **step.levers.report(flops),
    }


def _extras(step: CompiledStep, module: hlo.Module, ops: list[dict],
            weights: list[bool]) -> dict:
    """What the compile said beyond its figures: `compiled_for` (what
    compiled it: `target.py`), `bfloat16` (how: `precision.py`),
    `attention` (`attention.py`), `reshardings` and `xla_log` (what XLA
    wrote: `xla_log.parse()`), `compute_dtype` and, with a topology, `time`
    (`step_time.step_time()`)."""
    log = step.log or xla_log.parse("")
    out = {"compiled_for": step.target.describe(),
           "bfloat16": step.bfloat16[0], "attention": step.attention,
           "reshardings": log["reshardings"],
           "xla_log": log["log"], "compute_dtype": step.dtype}
    if step.machine is not None:
        machine, nodes = step.machine
        out["time"] = step_time(
            module, ops, weights, machine, nodes, step.dtype,
            step.target.overlaps_by_class,
            recompute_share=step.levers.recompute_share,
            accumulation_steps=step.levers.accumulation_steps)
    return out
