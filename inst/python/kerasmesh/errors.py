"""Errors the shim raises on purpose, and the envelope R calls through."""

from __future__ import annotations

import traceback
import warnings
from typing import Any, Callable, Iterable


# Every condition kind a user can catch, raised from Python or from R, with
# what it means. R signals `kerasmesh_error_<kind>` / `kerasmesh_warning_<kind>`
# (plus `kerasmesh_error` / `kerasmesh_warning`). tests/python/test_errors.py
# fails when a kind is raised that is not listed here, or listed and unused.
ERROR_KINDS: dict[str, str] = {
    "argument": "An argument has the wrong R type, length or value.",
    "array": "An array's values don't fit the shape asked for.",
    "array_na": "An array holds NA or NaN where a whole number is needed.",
    "array_range": "An array holds values its dtype can't represent.",
    "axis_names": "Mesh axis names are missing, empty or repeated.",
    "backend": "Keras runs on a backend other than JAX.",
    "batch_dim_name": "The batch dimension name is not a mesh axis.",
    "batch_size": "The batch size doesn't divide over the batch axis.",
    "checkpoint_directory": "A checkpoint directory is missing or not one.",
    "checkpoint_exists": "A checkpoint for this step exists already.",
    "checkpoint_incomplete": "A checkpoint was not fully written.",
    "checkpoint_layout": "A checkpoint's arrays can't be laid out as asked.",
    "checkpoint_model": "The object to save or restore is not a Keras model.",
    "checkpoint_orbax": "Orbax, needed for checkpoints, is not installed.",
    "checkpoint_shape": "A saved variable has another shape than the "
                        "model's.",
    "checkpoint_step": "The checkpoint step asked for does not exist.",
    "checkpoint_variables": "The checkpoint's variables differ from the "
                            "model's.",
    "compile": "XLA can't compile the training step for a layout.",
    "device_mesh": "A device mesh is needed and something else was given.",
    "device_type": "The device type is unknown or has no devices.",
    "devices": "The devices given for a mesh are wrong (count, repeats).",
    "devices_started": "JAX has started, so the devices can't change.",
    "distributed_argument": "A multi-process setting is missing or invalid.",
    "distributed_connect": "A process can't reach or join the coordinator.",
    "distributed_started": "The multi-process runtime is already started.",
    "distributed_timeout": "Processes did not all check in in time.",
    "distribution": "A Keras distribution is needed and none was given.",
    "distribution_argument": "An argument of a distribution is invalid.",
    "dtype": "The dtype asked for is unknown.",
    "input_shapes": "Input shapes are missing or don't fit the model.",
    "launch": "Local worker processes can't be started.",
    "launch_worker": "A local worker process failed or timed out.",
    "layout_ambiguous": "Several layout rules match a variable equally.",
    "layout_axes": "A layout names axes the mesh doesn't have, or repeats "
                   "one.",
    "layout_divisibility": "A dimension doesn't divide by its mesh axes.",
    "layout_key": "A layout map key is not a valid pattern.",
    "layout_key_exists": "A layout map already has this key.",
    "layout_map": "A layout map is needed and something else was given.",
    "layout_plan": "A layout plan found errors (also carries each "
                   "problem's own kind).",
    "layout_rank": "A layout has more axes than the variable has "
                   "dimensions.",
    "loss": "The model has no usable loss for costing a training step.",
    "mesh_shape": "The mesh shape doesn't fit the devices.",
    "model": "A Keras model is needed and something else was given.",
    "model_placement": "A model was built outside the distribution that "
                       "trains it.",
    "no_keras": "Python, Keras or JAX can't be found.",
    "optimizer": "The optimizer is not a Keras optimizer, or unbuilt.",
    "python": "Any other Python error (the message is Python's).",
    "shape": "A shape is not a vector of positive whole numbers.",
    "timeout": "Compiling took longer than the timeout.",
    "variable_path": "No variable has the path asked for.",
}

WARNING_KINDS: dict[str, str] = {
    "array_precision": "Whole numbers lose precision in the dtype asked "
                       "for.",
    "layout_plan": "A layout plan found problems that mis-shard silently "
                   "(also carries each problem's own kind).",
    "layout_rank": "A layout has fewer axes than the variable has "
                   "dimensions.",
    "mesh_rank": "data_parallel() got a mesh of several axes; it splits "
                 "the batch over the first only.",
    "replicated": "A large variable matches no rule and stays replicated.",
    "rows_dropped": "Rows of the last batch don't split evenly over the "
                    "processes and are not fed.",
    "unmatched_output_rule": "An output rule matches no layer output.",
    "unmatched_rule": "A layout rule matches no variable.",
}


def kinds() -> dict[str, dict[str, str]]:
    """Every condition kind a user can catch, with a one-line description.

    Returns:
        `{"errors": {kind: description}, "warnings": {kind: description}}`;
        R signals `kerasmesh_error_<kind>` and `kerasmesh_warning_<kind>`.
    """
    return {"errors": dict(ERROR_KINDS), "warnings": dict(WARNING_KINDS)}


class KerasmeshError(ValueError):
    """A validation error meant for the R user.

    Args:
        kind: short name of the problem; R raises `kerasmesh_error_<kind>`.
        message: the problem statement ("`shape` must ...").
        bullets: extra lines as `(name, text)` pairs, where name is `"x"`
            (what was received), `"i"` (a way out) or `"*"`.
    """

    def __init__(self, kind: str, message: str,
                 bullets: Iterable[tuple[str, str]] = ()):
        super().__init__(
            message + "".join(f"\n{name} {text}" for name, text in bullets))
        self.kind = kind
        self.message = message
        self.bullets = [(str(n), str(t)) for n, t in bullets]


def quoted(names) -> list[str]:
    """Names in double quotes, as R prints strings."""
    return [f'"{n}"' for n in names]


def describe_value(value: Any) -> str:
    """A short description of a value for error messages, in R's terms."""
    if value is None:
        return "NULL"
    if isinstance(value, bool):
        return "TRUE" if value else "FALSE"
    if isinstance(value, str):
        return f'the string "{value}"'
    if isinstance(value, (int, float)):
        return f"the number {value:g}"
    text = repr(value)
    if len(text) > 60:
        text = text[:57] + "..."
    return f"a Python {type(value).__name__} {text}"


class KerasmeshWarning(UserWarning):
    """A warning meant for the R user; R signals
    `kerasmesh_warning_<kind>`. Arguments as for `KerasmeshError`."""

    def __init__(self, kind: str, message: str,
                 bullets: Iterable[tuple[str, str]] = ()):
        super().__init__(message)
        self.kind = kind
        self.message = message
        self.bullets = [(str(n), str(t)) for n, t in bullets]


def warn(kind: str, message: str,
         bullets: Iterable[tuple[str, str]] = ()) -> None:
    """Warn the R user (through the envelope) with a classed warning."""
    warnings.warn(KerasmeshWarning(kind, message, bullets), stacklevel=2)


def _described_warnings(caught: list) -> list[list]:
    """The KerasmeshWarnings among `caught` as plain values; the others
    are shown as Python would have shown them."""
    out = []
    for w in caught:
        if isinstance(w.message, KerasmeshWarning):
            m = w.message
            out.append([m.kind, m.message, [list(b) for b in m.bullets]])
        else:
            warnings.showwarning(w.message, w.category, w.filename,
                                 w.lineno)
    return out


def envelope(fn: Callable, args: tuple, kwargs: dict) -> dict:
    """Call `fn`, returning its value or the error as plain values.

    R reads errors from the returned dict, so they arrive the same way on
    every reticulate version (1.28 gives `Rcpp::exception`, newer ones
    `python.builtin.*` conditions). Warnings the shim raises with `warn()`
    travel in "warnings" as [kind, message, bullets].
    """
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", KerasmeshWarning)
        try:
            out = {"ok": True, "value": fn(*args, **kwargs)}
        except KerasmeshError as e:
            out = {"ok": False, "kind": e.kind,
                   "python_type": type(e).__name__, "message": e.message,
                   "bullets": [list(b) for b in e.bullets],
                   "traceback": traceback.format_exc()}
        except Exception as e:  # noqa: BLE001 - every error goes back to R
            out = {"ok": False, "kind": "python",
                   "python_type": type(e).__name__, "message": str(e),
                   "bullets": [], "traceback": traceback.format_exc()}
    out["warnings"] = _described_warnings(caught)
    return out
