"""One definition of "fits", for every place that says whether a layout
fits a device's memory (a cost's print-out and picture, a comparison, a
plan's picture, the search).

A layout fits `memory` when the bytes one device needs are at most
`memory`. Those bytes are XLA's per-device total of the compiled training
step (arguments + outputs - the outputs that reuse arguments +
temporaries), or, where nothing was compiled (a plan), the plan's total per
device. Every report carries that figure as `need`; R compares it with a
`memory` given later (at print time) by the same rule (`fits()`), and
words the answer.
"""

from __future__ import annotations

from collections.abc import Mapping


def xla_total(xla: Mapping[str, float]) -> float:
    """XLA's total per device from `memory_analysis()`'s figures."""
    return float(xla["argument"] + xla["output"] - xla["alias"] + xla["temp"])


def need(xla: Mapping[str, float] | None = None,
         plan_total: float | None = None) -> float:
    """The bytes one device needs: XLA's total when the step was
    compiled, else the plan's total per device.

    Raises:
        ValueError: when given neither.
    """
    if xla is not None:
        return xla_total(xla)
    if plan_total is None:
        raise ValueError("need() needs XLA's figures or a plan's total")
    return float(plan_total)


def fits(needed: float, memory: float | None) -> bool | None:
    """Whether `needed` bytes fit `memory` bytes per device; None when
    there is no `memory` to fit."""
    if memory is None:
        return None
    return needed <= memory
