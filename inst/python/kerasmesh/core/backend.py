"""Which Keras backend runs, and the checks that need a particular one."""

from __future__ import annotations

import os
import sys

from .errors import KerasmeshError, quoted
from . import kinds


def keras_backend() -> str:
    """The name of the Keras backend (imports keras)."""
    import keras

    return keras.backend.backend()


def backend_state() -> dict:
    """The backend Keras runs on, or the one it will start on, without
    starting Keras.

    Returns:
        {"started": whether keras has been imported in this process,
        "backend": keras's backend once started, else this process's
        `KERAS_BACKEND` ("" when unset)}.
    """
    if "keras" in sys.modules:
        return {"started": True, "backend": keras_backend()}
    return {"started": False,
            "backend": os.environ.get("KERAS_BACKEND", "")}


def require_backend(allowed: tuple[str, ...] = ("jax",),
                    what: str = "This function") -> None:
    """Raise a `backend` error unless Keras runs on one of `allowed`.

    The R side checks the backend before it calls the shim (R/backend.R);
    this is the same check for callers that reach the shim otherwise.
    """
    backend = keras_backend()
    if backend not in allowed:
        names = " or ".join(quoted(allowed))
        raise KerasmeshError(
            kinds.BACKEND,
            f"{what} needs the Keras {names} backend.",
            x=f"Keras is running on the \"{backend}\" backend.",
            i="Keras 3's distribution API is implemented for JAX. Call "
              "`keras3::use_backend(\"jax\")` or set `KERAS_BACKEND=jax` "
              "before Keras starts; Keras has started, so restart R "
              "first.")


def jax_backend_started() -> bool:
    """Whether JAX has created its device backends in this process."""
    bridge = sys.modules.get("jax._src.xla_bridge")
    if bridge is None:
        return False
    return bool(getattr(bridge, "_backends", None))


def set_environ(values: dict[str, str]) -> None:
    """Set environment variables for this process (Python and C)."""
    os.environ.update(values)
