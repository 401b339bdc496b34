"""What one profile compile says, and what a configuration is predicted
to need and take from those figures.

`Figures.of()` keeps what the search needs of a `cost.layout_cost()`
result (compiled with `trace=True`): XLA's memory split into what does
not depend on the micro-batch (`static`: weights, optimizer state, the
outputs not written over the arguments) and what does (`temp`, XLA's
temporaries, and `inputs`, the batch), the trainable bytes an
accumulator doubles (`gradients`), the collectives' bytes by mesh axes,
the schedule (`trace`, `ops`) and the reshardings. How a prediction is
made from them is `pipeline.py`'s docstring, step 4.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, fields
from typing import Any


@dataclass(frozen=True)
class Figures:
    """One compile's figures (per device, one micro-step).

    Attributes:
        static, temp, inputs: bytes (memory is their sum).
        gradients: trainable bytes per device (an accumulator's).
        flops: FLOPs of the micro-step; recompute_share: the part spent
            recomputing.
        by_axes: collective bytes by mesh axes ("+"-joined), split into
            `weights` (moving weights or their gradients) and the rest.
        trace, ops: the compiled schedule (`cost/schedule.py`).
        reshardings: tensors XLA replicated to reshard them.
        micro_batch: the micro-batch compiled.
        by_class: whether collectives overlap by class (a CPU compile).
    """

    static: float
    temp: float
    inputs: float
    gradients: float
    flops: float
    recompute_share: float
    by_axes: dict = field(default_factory=dict)
    trace: list = field(default_factory=list)
    ops: list = field(default_factory=list)
    reshardings: int = 0
    micro_batch: int = 1
    by_class: bool = False

    @property
    def memory(self) -> float:
        return self.static + self.temp + self.inputs

    @classmethod
    def of(cls, r: dict) -> Figures:
        """The figures of one `layout_cost(trace=True)` result."""
        xla, memory = r["xla"], r["memory"]
        by_axes: dict[str, dict[str, float]] = {}
        for op in r["ops"]:
            key = "+".join(op["axes"])
            part = "weights" if op.get("weights") else "activations"
            row = by_axes.setdefault(key, {"weights": 0.0,
                                           "activations": 0.0})
            row[part] += float(op["bytes"])
        share = r["recompute_flops"] / r["flops"] if r["flops"] else 0.0
        resh = r.get("reshardings") or {}
        return cls(
            static=float(r["need"] - xla["temp"] - memory["inputs"]),
            temp=float(xla["temp"]), inputs=float(memory["inputs"]),
            gradients=float(r["plan"].get("device_gradients", 0.0)),
            flops=float(r["flops"]), recompute_share=float(share),
            by_axes=by_axes, trace=r["trace"], ops=r["ops"],
            reshardings=len(resh.get("op_name", [])) if isinstance(
                resh, dict) else len(resh),
            micro_batch=int(r["micro_batch_size"]),
            by_class=r["compiled_for"]["kind"] == "cpu")

    def stored(self) -> dict:
        """Plain values for the cache (`read()` reads them back)."""
        return asdict(self)

    @classmethod
    def read(cls, value: dict) -> Figures:
        """Figures from `stored()`'s values.

        Raises:
            KeyError, TypeError: for values of another shape.
        """
        return cls(**{f.name: value[f.name] for f in fields(cls)})

    def plain(self) -> dict[str, Any]:
        """Plain values for R: memory, traffic, by axes, FLOPs."""
        return {"memory": self.memory,
                "traffic": sum(sum(v.values()) for v in self.by_axes.values()),
                "by_axes": {k: sum(v.values())
                            for k, v in self.by_axes.items()},
                "flops": self.flops, "reshardings": self.reshardings}

