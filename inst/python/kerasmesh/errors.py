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
    "backend": "Keras runs, or would start, on a backend other than JAX.",
    "batch_dim_name": "The batch dimension name is not a mesh axis.",
    "batch_size": "The batch size doesn't divide over the batch axis.",
    "checkpoint_directory": "A checkpoint directory is missing or not one, "
                            "or can't be created.",
    "checkpoint_dtype": "A saved variable has another dtype than the "
                        "model's.",
    "checkpoint_exists": "A checkpoint for this step exists already, or "
                         "its folder is not one kerasmesh saved.",
    "checkpoint_incomplete": "A checkpoint step was not fully written or "
                             "is damaged.",
    "checkpoint_layout": "A checkpoint's arrays can't be laid out as asked.",
    "checkpoint_model": "The object to save or restore is not a Keras model.",
    "checkpoint_orbax": "Orbax, needed for checkpoints, is not installed.",
    "checkpoint_shape": "A saved variable has another shape than the "
                        "model's.",
    "checkpoint_step": "The checkpoint step asked for does not exist.",
    "checkpoint_variables": "The checkpoint's variables differ from the "
                            "model's.",
    "checkpoint_write": "The file system refused to write a checkpoint "
                        "step (disk full, permissions).",
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
    "install_download": "install_kerasmesh() can't download or install "
                        "the Python packages.",
    "install_envname": "install_kerasmesh()'s environment path is a file "
                       "or a directory that is not a virtualenv.",
    "install_python": "The Python for install_kerasmesh() is missing, too "
                      "old, or has no shared libpython.",
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
    "memory_budget": "No layout a search costed fits the memory budget.",
    "mesh_shape": "The mesh shape doesn't fit the devices.",
    "model": "A Keras model is needed and something else was given.",
    "model_placement": "A model was built outside the distribution that "
                       "trains it.",
    "no_keras": "Python, Keras or JAX can't be found.",
    "optimizer": "The optimizer is not a Keras optimizer, or unbuilt.",
    "python": "Any other Python error (the message is Python's).",
    "search_fixed": "Rules pinned for a layout search clash or can't "
                    "place a variable.",
    "shape": "A shape is not a vector of positive whole numbers.",
    "timeout": "Costing a training step took longer than the timeout.",
    "variable_path": "No variable has the path asked for.",
}

WARNING_KINDS: dict[str, str] = {
    "checkpoint_fallback": "Newer checkpoint steps are incomplete or "
                           "damaged; an older one is restored.",
    "array_precision": "Whole numbers lose precision in the dtype asked "
                       "for.",
    "layout_plan": "A layout plan found problems that mis-shard silently "
                   "(also carries each problem's own kind).",
    "layout_rank": "A layout has fewer axes than the variable has "
                   "dimensions.",
    "mesh_rank": "data_parallel() got a mesh of several axes; it splits "
                 "the batch over the first only.",
    "replicated": "A large variable matches no rule and stays replicated.",
    "search_extrapolation": "A search's figures extrapolated from reduced "
                            "depths differ from the full model's.",
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


# Where a bullet's text shows the value a fact describes (see `received()`).
VALUE = "{value}"
# How much of a received value a fact previews: elements, characters.
PREVIEW_VALUES = 5
PREVIEW_CHARS = 40

_NOTHING = object()


def _bullets(bullets: Iterable[tuple]) -> list[tuple]:
    """Bullets as `(name, text)`, or `(name, text, fact)` where the text
    shows a received value at `VALUE`."""
    return [(str(b[0]), str(b[1])) + tuple(b[2:3]) for b in bullets]


def bullet_text(bullet: tuple) -> str:
    """A bullet's text for Python's own messages (R words the fact)."""
    if len(bullet) < 3:
        return bullet[1]
    return bullet[1].replace(VALUE, fact_words(bullet[2]), 1)


class KerasmeshError(ValueError):
    """A validation error meant for the R user.

    Args:
        kind: short name of the problem; R raises `kerasmesh_error_<kind>`.
        message: the problem statement ("`shape` must ...").
        bullets: extra lines as `(name, text)` pairs, where name is `"x"`
            (what was received), `"i"` (a way out) or `"*"`; or as
            `received()` makes them, `(name, text, fact)`.
        x: the text of an `"x"` bullet, shown first.
        i: the text of an `"i"` bullet, shown last.
        received: the value the user passed, when it is the problem:
            `received(value)`'s bullet, "Received <the value>.", first.

    The usual error is a statement, what was received, and a way out:
    `KerasmeshError(kind, "`arg` must be ...", received=arg, i="...")`.
    """

    def __init__(self, kind: str, message: str,
                 bullets: Iterable[tuple] = (), *, x: str | None = None,
                 i: str | None = None, received: Any = _NOTHING):
        bullets = _bullets(bullets)
        if x is not None:
            bullets.insert(0, ("x", str(x)))
        if received is not _NOTHING:
            bullets.insert(0, _received_bullet(received))
        if i is not None:
            bullets.append(("i", str(i)))
        super().__init__(
            message + "".join(f"\n{b[0]} {bullet_text(b)}" for b in bullets))
        self.kind = kind
        self.message = message
        self.bullets = bullets


def quoted(names) -> list[str]:
    """Names in double quotes, as R prints strings."""
    return [f'"{n}"' for n in names]


def received(value: Any, text: str = f"Received {VALUE}.",
             name: str = "x") -> tuple[str, str, dict]:
    """A bullet that shows a value the user passed: `(name, text, fact)`.

    The text says where the value goes (`VALUE`, "{value}"); the fact
    (`value_fact()`) travels to R, which words it in R's terms.
    """
    return (name, text, value_fact(value))


_received_bullet = received  # for KerasmeshError, whose argument hides it


def _leaf_type(value: Any) -> str | None:
    """The R vector type a single converted value comes from, or None."""
    if isinstance(value, bool):
        return "logical"
    if isinstance(value, str):
        return "character"
    if isinstance(value, (int, float)):
        return "numeric"
    return None


def _class_name(value: Any) -> str:
    cls = type(value)
    module = cls.__module__
    return cls.__qualname__ if module == "builtins" else \
        f"{module}.{cls.__qualname__}"


def _preview(value: Any) -> Any:
    """One element as a plain, bounded value: a leaf (strings cut to
    `PREVIEW_CHARS`), None, or the fact of a nested value without its
    elements."""
    if isinstance(value, str) and len(value) > PREVIEW_CHARS:
        return value[: PREVIEW_CHARS - 3] + "..."
    if value is None or _leaf_type(value) is not None:
        return value
    fact = value_fact(value)
    fact.pop("values", None)
    fact.pop("names", None)
    return fact


def _sequence_type(value: list | tuple) -> str:
    """"character", "numeric" or "logical" for elements of one R type
    (None standing for NA), else "list" ("tuple" for a tuple)."""
    if isinstance(value, tuple):
        return "tuple"
    types = {_leaf_type(v) for v in value if v is not None}
    return types.pop() if len(types) == 1 and None not in types else "list"


def value_fact(value: Any) -> dict:
    """What the user passed, as reticulate converted it, as plain values.

    Returns:
        `{"type", "length"}` and, by type, `"values"` (the first
        `PREVIEW_VALUES` elements, see `_preview()`), `"names"` (a dict's
        first keys) or `"class"`. Types: "null"; "character", "numeric",
        "logical" (a scalar, or a list of that R type with None for NA);
        "list", "tuple", "named_list" (a dict); "object" (anything else).
    """
    if value is None:
        return {"type": "null", "length": 0}
    leaf = _leaf_type(value)
    if leaf is not None:
        return {"type": leaf, "length": 1, "values": [_preview(value)]}
    if isinstance(value, dict):
        keys = list(value)[:PREVIEW_VALUES]
        return {"type": "named_list", "length": len(value),
                "names": [str(k) for k in keys],
                "values": [_preview(value[k]) for k in keys]}
    if isinstance(value, (list, tuple)):
        return {"type": _sequence_type(value), "length": len(value),
                "values": [_preview(v) for v in value[:PREVIEW_VALUES]]}
    return {"type": "object", "length": 1, "class": _class_name(value)}


def _number_text(x: float) -> str:
    """A number as R prints it: 3 for 3.0."""
    return str(int(x)) if isinstance(x, float) and x.is_integer() \
        else repr(x)


def fact_words(fact: dict) -> str:
    """A fact in a few words, for Python's own messages and tracebacks;
    R words facts itself, with the previewed values."""
    kind, n = fact["type"], fact["length"]
    values = fact.get("values") or [None]
    if kind == "null":
        return "NULL"
    if kind == "object":
        return f"an object of class <{fact['class']}>"
    if n == 1 and kind in ("logical", "character", "numeric") and \
            not isinstance(values[0], dict):
        v = values[0]
        if kind == "logical":
            return "TRUE" if v else "FALSE" if v is not None else "NA"
        return f'the string "{v}"' if kind == "character" else \
            f"the number {_number_text(v)}"
    noun = {"named_list": "named list"}.get(kind, kind)
    if kind in ("logical", "character", "numeric"):
        return f"a {noun} vector of length {n}"
    return f"a {noun} of {n} value{'s' if n != 1 else ''}"


class KerasmeshWarning(UserWarning):
    """A warning meant for the R user; R signals
    `kerasmesh_warning_<kind>`. Arguments as for `KerasmeshError`."""

    def __init__(self, kind: str, message: str,
                 bullets: Iterable[tuple[str, str]] = ()):
        super().__init__(message)
        self.kind = kind
        self.message = message
        self.bullets = _bullets(bullets)


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
