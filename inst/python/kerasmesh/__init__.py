"""The Python half of the kerasmesh R package.

R calls every function as `call("module.function", ...)`, which returns
plain values (and the Keras objects R wraps) or a description of the error.
Modules are imported on first use, so adding one needs no change here.
Names defined here must not clash with module names: importing a
submodule sets the package attribute of the same name.
"""

from __future__ import annotations

import importlib

from .errors import KerasmeshError, envelope


def _function(name: str):
    """The function named "module.function" in this package."""
    module_name, _, fn_name = name.partition(".")
    module = importlib.import_module(f"{__name__}.{module_name}")
    return getattr(module, fn_name)


def call(name: str, *args, **kwargs) -> dict:
    """Call "module.function" inside the error envelope."""
    return envelope(lambda: _function(name)(*args, **kwargs), (), {})


__all__ = ["KerasmeshError", "call"]
