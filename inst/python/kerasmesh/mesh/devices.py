"""Devices as Keras names them ("cpu:0", "gpu:3")."""

from __future__ import annotations

from ..core.backend import jax_backend_started, require_backend
from ..core.errors import KerasmeshError
from ..core import kinds

DEVICE_TYPES = ("cpu", "gpu", "tpu")


def list_devices(device_type: str | None = None) -> list[str]:
    """Device names of one type, global across processes.

    Args:
        device_type: "cpu", "gpu", "tpu" or None for the default type.

    Returns:
        A list of names such as "cpu:0".

    Raises:
        KerasmeshError: on an unknown device type or one with no devices.
    """
    require_backend(("jax",), "Listing devices")
    import keras

    if device_type is not None:
        if not isinstance(device_type, str) or \
                device_type.lower() not in DEVICE_TYPES:
            raise KerasmeshError(
                kinds.DEVICE_TYPE,
                "`device_type` must be one of \"cpu\", \"gpu\" or \"tpu\".",
                received=device_type)
        device_type = device_type.lower()
    try:
        return [str(d) for d in keras.distribution.list_devices(device_type)]
    except RuntimeError as e:
        raise KerasmeshError(
            kinds.DEVICE_TYPE, f"No {device_type} devices are available.",
            x=str(e).splitlines()[0]) from e


def device_type_of(name: str) -> str:
    """The type part of a device name: "cpu" for "cpu:3"."""
    return name.split(":", 1)[0]


def local_cpu_device_count() -> int | None:
    """CPU devices of this process, or None when JAX has not started."""
    if not jax_backend_started():
        return None
    import jax

    return jax.local_device_count("cpu")
