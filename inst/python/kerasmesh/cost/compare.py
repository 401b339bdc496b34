"""Several layouts of one model costed in one loop.

`compare_layouts()` and `search_layout()` cost many layouts of the same
model: the model is built once (shape-only) and each layout's training
step is compiled in turn by `cost.layout_cost()`, within one deadline for
the whole loop. Each layout's outcome travels back as its own envelope
(`errors.envelope()`: the value, or the error as plain values, and the
warnings), so that R can name the layout an error belongs to.
"""

from __future__ import annotations

import time
from typing import Any

from ..core.errors import envelope
from ..plan import planner as plan
from . import layout_cost as cost
from .deadline import COSTING, Deadline, timeout_error


def build_model(model: Any, timeout: float, spent: float = 0.0,
                task: tuple[str, str] = COSTING) -> Any:
    """The model, built once (shape-only) within `timeout` - `spent` s;
    `task` (`deadline.COSTING` or `SEARCHING`) words the timeout.

    Raises:
        KerasmeshError: kind `timeout` when building takes too long; the
            builder's own error otherwise; kind `model` for a non-model.
    """
    clock = Deadline(timeout - spent)
    clock.phase = "building the model"
    try:
        with clock.armed():
            return plan.as_model(model)
    except BaseException:
        if clock.passed():
            raise timeout_error(
                timeout, f"The time ran out while {clock.phase}.",
                task) from None
        raise


def layout_costs(model: Any, distributions: list, batch_size: Any,
                 optimizer: Any = None, loss: Any = None,
                 input_shapes: dict | None = None, timeout: Any = 300,
                 spent: Any = 0, remat: Any = None,
                 accumulation_steps: Any = None,
                 topology: Any = None) -> list[dict]:
    """`cost.layout_cost()` of each distribution, the model built once.

    Args:
        model: a built Keras model, or a function that builds one.
        distributions: Keras distributions, in order.
        timeout: seconds for the whole loop, less `spent` (seconds the
            caller spent before).
        topology: the machine to model each step's time on, or None.
        Others as for `cost.layout_cost()`.

    Returns:
        One envelope per layout costed (`{"ok", "value" | error facts,
        "warnings"}`), stopping after the first that failed; when building
        the model fails, one envelope with that error.
    """
    start = time.monotonic() - float(spent or 0)
    built = envelope(build_model, (model, float(timeout), float(spent or 0)),
                     {})
    if not built["ok"]:
        return [built]
    model = built.pop("value")
    out = []
    for d in distributions:
        result = envelope(
            lambda d=d: cost.layout_cost(
                model, d, batch_size, optimizer, loss, input_shapes,
                timeout, time.monotonic() - start, remat=remat,
                accumulation_steps=accumulation_steps, topology=topology),
            (), {})
        if built["warnings"] and not out:
            result["warnings"] = built["warnings"] + result["warnings"]
        out.append(result)
        if not result["ok"]:
            break
    return out
