"""JAX's platforms on a machine where XLA's GPU compiler has no GPU.

With JAX's CUDA plugin installed (`install_kerasmesh(gpu_compiler =
TRUE)`, which kerasmesh uses to compile for GPUs it does not have) and
no NVIDIA driver, JAX prints a plugin error and a traceback the first
time it looks for devices (CUDA's `cuInit` fails), then falls back to the
CPU. `cpu_without_gpus()` makes that choice before JAX looks: where
`JAX_PLATFORMS` is unset, the plugin is installed and the machine has no
NVIDIA driver, `JAX_PLATFORMS` becomes "cpu", what JAX would run on
anyway. The plugin's compiler still compiles for GPUs
(`jax.experimental.topologies`).
"""

from __future__ import annotations

import ctypes.util
import importlib.util
import os

from .backend import jax_backend_started

_PLUGINS = ("jax_plugins.xla_cuda12", "jax_plugins.xla_cuda13")
_DRIVER = "/proc/driver/nvidia/version"


def has_nvidia_driver() -> bool:
    """Whether the machine has an NVIDIA driver (its kernel module, or
    CUDA's driver library)."""
    return os.path.exists(_DRIVER) or ctypes.util.find_library("cuda") \
        is not None


def _plugin_installed() -> bool:
    for name in _PLUGINS:
        try:
            if importlib.util.find_spec(name) is not None:
                return True
        except (ImportError, ValueError):
            continue
    return False


def cpu_without_gpus() -> bool:
    """Set `JAX_PLATFORMS=cpu` where JAX would fail to start CUDA (see
    the module's docstring); return whether it was set."""
    if "JAX_PLATFORMS" in os.environ or jax_backend_started():
        return False
    if not _plugin_installed() or has_nvidia_driver():
        return False
    os.environ["JAX_PLATFORMS"] = "cpu"
    return True
