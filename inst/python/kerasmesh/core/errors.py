"""Errors the shim raises on purpose, and the envelope R calls through."""

from __future__ import annotations

import threading
import traceback
import warnings
from collections.abc import Callable, Iterable
from typing import Any

from .text import plural, string

from . import kinds as _kinds


def kinds() -> dict[str, dict[str, str]]:
    """Every condition kind a user can catch, with what it means.

    Returns:
        `{"errors": {kind: description}, "warnings": {kind: description}}`
        from the registry (`kinds.py`); R signals `kerasmesh_error_<kind>`
        and `kerasmesh_warning_<kind>`.
    """
    return _kinds.kinds()


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
        kind: the problem, a registered error kind (`kinds.MESH_SHAPE`);
            R raises `kerasmesh_error_<kind>`. An unknown kind raises
            `kinds.UnknownKind` here.
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
        kind = _kinds.check(kind, _kinds.ERROR)
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
    return [string(n) for n in names]


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
    return f"a {noun} of {plural(n, 'value')}"


class KerasmeshWarning(UserWarning):
    """A warning meant for the R user; R signals
    `kerasmesh_warning_<kind>`. Arguments as for `KerasmeshError`; the kind
    must be a registered warning kind."""

    def __init__(self, kind: str, message: str,
                 bullets: Iterable[tuple[str, str]] = ()):
        kind = _kinds.check(kind, _kinds.WARNING)
        super().__init__(message)
        self.kind = kind
        self.message = message
        self.bullets = _bullets(bullets)


# How warnings reach R. Inside `envelope()` (R called the shim) they are
# recorded and travel back with the result. Outside it (R called a Keras
# method directly, as in `model$fit()`, so reticulate is the caller) the
# R function R registered with `set_r_warning()` signals them as R
# warnings at once. Without one (plain Python, or a thread that is not
# R's), or when R could not take the warning (an exiting handler such as
# `tryCatch(warning = )`, or `options(warn = 2)`: R can't unwind through
# Python, so reticulate raises a Python error in the callback instead),
# they are Python warnings, as Python code expects.
_ROUTE: dict[str, Any] = {"envelopes": 0, "r_warning": None}


def set_r_warning(fn: Callable | None) -> Callable | None:
    """Register the R function that signals a warning in R, called as
    `fn(kind, message, bullets)`; returns the one registered before."""
    old = _ROUTE["r_warning"]
    _ROUTE["r_warning"] = fn
    return old


def warn(kind: str, message: str, bullets: Iterable[tuple[str, str]] = (),
         category: type = KerasmeshWarning) -> None:
    """Warn the R user with a classed warning (see `_ROUTE`).

    Args:
        kind: a registered warning kind (`kinds.REPLICATED`).
        message, bullets: as for `KerasmeshError`.
        category: `KerasmeshWarning` or a subclass, for Python's filters.
    """
    w = category(kind, message, bullets)
    r_warning = _ROUTE["r_warning"]
    if _ROUTE["envelopes"] or r_warning is None or \
            threading.current_thread() is not threading.main_thread():
        warnings.warn(w, stacklevel=2)
        return
    try:
        r_warning(w.kind, w.message, [list(b) for b in w.bullets])
    except Exception:  # noqa: BLE001 - R refused it: a Python warning then
        warnings.warn(w, stacklevel=2)


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


def interrupted_in_r(e: BaseException) -> bool:
    """Whether `e` is Ctrl-C, as reticulate before 1.39 reports it where R
    took the interrupt inside an R function Python called (R's warning
    function, a search's progress, reticulate's own SIGINT handler in
    `rpytools/signals.py`, which `core.interrupts` keeps out of shim calls
    where it can): reticulate catches R's jump out of the function and
    raises RuntimeError("(Unknown exception occurred)") through
    `rpytools` instead. The envelope raises it as what it is,
    KeyboardInterrupt, which R then signals as an interrupt."""
    if not isinstance(e, RuntimeError) or \
            str(e) != "(Unknown exception occurred)":
        return False
    tb = e.__traceback__
    while tb is not None:
        if "/rpytools/" in tb.tb_frame.f_code.co_filename.replace(
                "\\", "/"):
            return True
        tb = tb.tb_next
    return False


def envelope(fn: Callable, args: tuple, kwargs: dict) -> dict:
    """Call `fn`, returning its value or the error as plain values.

    R reads errors from the returned dict, so they arrive the same way on
    every reticulate version (1.28 gives `Rcpp::exception`, newer ones
    `python.builtin.*` conditions). Warnings the shim raises with `warn()`
    travel in "warnings" as [kind, message, bullets].
    """
    _ROUTE["envelopes"] += 1
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
            if interrupted_in_r(e):
                raise KeyboardInterrupt from e
            out = {"ok": False, "kind": _kinds.PYTHON,
                   "python_type": type(e).__name__, "message": str(e),
                   "bullets": [], "traceback": traceback.format_exc()}
        finally:
            _ROUTE["envelopes"] -= 1
    out["warnings"] = _described_warnings(caught)
    return out
