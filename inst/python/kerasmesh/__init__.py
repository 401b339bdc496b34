"""The Python half of the kerasmesh R package.

R calls every function as `call("module.function", ...)`, which returns
plain values (and the Keras objects R wraps) or a description of the error.
Modules are imported on first use, so adding one needs no change here.
"""

from __future__ import annotations

import importlib

from .errors import KerasmeshError, envelope


def resolve(name: str):
    """The function named "module.function" in this package."""
    module_name, _, fn_name = name.partition(".")
    module = importlib.import_module(f"{__name__}.{module_name}")
    return getattr(module, fn_name)


def call(name: str, *args, **kwargs) -> dict:
    """Call "module.function" inside the error envelope."""
    return envelope(lambda: resolve(name)(*args, **kwargs), (), {})


__all__ = ["KerasmeshError", "call", "resolve"]
