"""Errors the shim raises on purpose, and the envelope R calls through."""

from __future__ import annotations

import traceback
import warnings
from typing import Any, Callable, Iterable


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
