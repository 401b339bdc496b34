"""The Python half of the kerasmesh R package.

R calls every function in one of two ways, and the way states what it
returns:

* `call("module.function", ...)` for plain values: None, bool, int, float,
  str, lists, tuples and dicts of them, and Keras objects that R wraps.
  R converts the result, so it must hold no NumPy (or pandas) value:
  reticulate 1.28 cannot convert NumPy 2 arrays and >= 1.38 converts them
  to R arrays, so such a value would reach R differently on each version.
  `plain()` enforces this.
* `call_object("module.function", ...)` for a Python object that stays
  Python in R (a NumPy array): R holds it through a `convert = FALSE`
  handle, so no reticulate version converts it.

"module.function" names a function that `api/module.py` exports: R
reaches nothing outside `api/`. Arguments travel by keyword only, so that a
signature reordered on either side fails loudly (an unknown keyword is a
TypeError) instead of mismatching silently. Both return the envelope of
`core.errors.envelope()` (`call_object()` with the value beside it).
Modules are imported on first use. Names defined here must not clash with
subpackage names: importing a subpackage sets the package attribute of the
same name.
"""

from __future__ import annotations

import importlib
from typing import Any

from .core.errors import KerasmeshError, envelope
from .core.interrupts import shim_interrupts

_PLAIN_LEAVES = (type(None), bool, int, float, str)
_FLAT_LEAVES = (type(None), bool, float, str)
_R_INTEGER_MAX = 2**31 - 1
_CONVERTED_MODULES = ("numpy", "pandas")


def _function(name: str):
    """The function R names "module.function": one of `api/`'s exports."""
    module_name, _, fn_name = name.partition(".")
    module = importlib.import_module(f"{__name__}.api.{module_name}")
    if fn_name not in module.__all__:
        raise AttributeError(f"kerasmesh.api.{module_name} has no {fn_name}")
    return getattr(module, fn_name)


def plain(value: Any, where: str = "value") -> Any:
    """`value`, after checking that reticulate converts it the same way on
    every version: no NumPy or pandas object anywhere inside, and no
    integer R's integers can't hold (reticulate 1.28 wraps those around,
    so 15,332,469,805,107 arrived as -563,441,613): those become floats,
    in a copy of the containers that hold them, and those past a float's
    range become infinite. A value that needs no change is returned as it
    is.

    Raises:
        TypeError: naming where the offending value is.
    """
    if isinstance(value, int) and not isinstance(value, bool):
        if abs(value) <= _R_INTEGER_MAX:
            return value
        try:
            return float(value)
        except OverflowError:  # past 1.8e308 (a search space's count)
            return float("inf") if value > 0 else float("-inf")
    if isinstance(value, _PLAIN_LEAVES):
        return value
    if isinstance(value, dict):
        out = {k: plain(v, f"{where}[{k!r}]") for k, v in value.items()}
        same = all(out[k] is v for k, v in value.items())
        return value if same else out
    if isinstance(value, (list, tuple)):
        out = None
        for i, v in enumerate(value):
            if type(v) in _FLAT_LEAVES or \
                    (type(v) is int and abs(v) <= _R_INTEGER_MAX):
                continue  # the common case, without a call
            w = plain(v, f"{where}[{i}]")
            if w is not v:
                out = list(value) if out is None else out
                out[i] = w
        if out is None:
            return value
        return tuple(out) if isinstance(value, tuple) else out
    module = type(value).__module__.partition(".")[0]
    if module in _CONVERTED_MODULES:
        raise TypeError(
            f"The shim returned a {module} {type(value).__name__} at "
            f"{where}; reticulate converts it differently by version. "
            "Return builtins, or call it with call_object().")
    return value


def call(name: str, /, **kwargs) -> dict:
    """Call "module.function" for plain values (see `plain()`), its
    arguments by keyword. Ctrl-C meanwhile is R's interrupt
    (`core.interrupts`)."""
    with shim_interrupts():
        return envelope(lambda: plain(_function(name)(**kwargs)), (), {})


def call_object(name: str, /, **kwargs) -> tuple:
    """Call "module.function" for a Python object R keeps unconverted, its
    arguments by keyword.

    Returns:
        (the envelope without its value, the value or None), so that R
        converts the first and never the second.
    """
    with shim_interrupts():
        out = envelope(lambda: _function(name)(**kwargs), (), {})
    return out, out.pop("value", None)


__all__ = ["KerasmeshError", "call", "call_object", "plain"]
