"""Which compiler a cost's step is compiled by, and for which devices.

`choose()` decides, once per cost, from the mesh's devices and the
topology:

* the mesh's own devices are GPUs (a machine with GPUs): XLA's GPU
  compiler for them (`GPU`), figures as they are;
* a topology (`device_topology()`) and XLA's GPU compiler installed
  (`jax-cuda12-plugin` at jaxlib's version; `install_kerasmesh(
  gpu_compiler = TRUE)`): XLA's GPU compiler for that GPU and node layout,
  without the GPUs (`GPU_DEVICELESS`): the step is lowered for devices of
  a compile-only topology (`jax.experimental.topologies`), the user's mesh
  mapped onto them device id for device id (`retarget()`), so each device
  sits in the node `topology/time.device_nodes()` gives it. A topology of
  custom hardware compiles with the nearest preset's target
  (`gpu_targets.nearest()`), its own memory and bandwidth written in;
* otherwise XLA's CPU compiler stands in (`CPU`).

Every correction that makes the CPU compiler's figures a GPU's is decided
here and nowhere else (`Target`'s properties): bfloat16 retyped to
float16 (`precision.py`), attention computed in blocks (`attention.py`),
XLA's memory-optimized scheduler and all-reduces kept apart
(`deadline.py`'s options), and collectives overlapped by class
(`schedule.overlap_by_class()`) where a GPU compile has its own schedule.
On a GPU target, attention runs as Keras runs it on a GPU: cuDNN's fused
attention (`attention.CUDNN`), or computed in blocks where XLA's GPU
partitioner refuses cuDNN's layout (`layout_cost._compile_step()`).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, replace
from importlib import metadata
from typing import Any

from ..core.errors import KerasmeshError
from ..core import kinds
from ..layout_map.rules import rebind
from ..mesh.data_parallel import data_parallel_on
from ..topology.machine import Topology
from .attention import BLOCKS, CUDNN, NATIVE
from .deadline import APART_ALL_REDUCES, MEMORY_SCHEDULE, QUICK
from .gpu_targets import SPECS, nearest

CPU = "cpu"
GPU = "gpu"
GPU_DEVICELESS = "gpu-deviceless"

# The distributions of the GPU compiler, by the CUDA major version.
_PLUGINS = ("jax-cuda12-plugin", "jax-cuda13-plugin")


def gpu_compiler() -> str | None:
    """The version of XLA's GPU compiler (JAX's CUDA plugin) installed,
    or None.

    Raises:
        KerasmeshError: kind `gpu_compiler` when its version is not
            jaxlib's (JAX refuses to load it).
    """
    import jaxlib

    for name in _PLUGINS:
        try:
            version = metadata.version(name)
        except metadata.PackageNotFoundError:
            continue
        if version != jaxlib.__version__:
            raise KerasmeshError(
                kinds.GPU_COMPILER,
                "XLA's GPU compiler must be the version of jaxlib.",
                x=f"{name} is {version}; jaxlib is {jaxlib.__version__}.",
                i=f"Install {name}=={jaxlib.__version__}, or reinstall "
                  "with `install_kerasmesh(gpu_compiler = TRUE)`.")
        return version
    return None


@functools.lru_cache(maxsize=8)
def _devices(config: str, nodes: int, per_node: int) -> tuple:
    """The devices of a compile-only GPU topology, by id.

    Raises:
        KerasmeshError: kind `gpu_compiler` when JAX has no CUDA platform
            to make them with: it started (Keras imported first) before
            kerasmesh could keep it on the CPU of a machine without an
            NVIDIA driver (`core/platforms.py`), and its CUDA plugin failed.
    """
    from jax.experimental import topologies

    try:
        topo = topologies.get_topology_desc(
            platform="cuda", target_config=config,
            topology=f"1x{nodes}x{per_node}")
    except NotImplementedError as e:
        raise KerasmeshError(
            kinds.GPU_COMPILER,
            "XLA's GPU compiler is installed but JAX can't use it.",
            x=f"JAX: {e}.",
            i="JAX started its CUDA plugin without a GPU driver, before "
              "kerasmesh could keep it on the CPU: call a kerasmesh "
              "function (or set JAX_PLATFORMS=cpu) before importing Keras, "
              "in a new session; or cost without `topology`.") from None
    return tuple(sorted(topo.devices, key=lambda d: d.id))


@dataclass(frozen=True)
class Target:
    """What compiles a cost's step.

    Attributes:
        kind: `CPU`, `GPU` or `GPU_DEVICELESS`.
        label: what the cost says compiled it ("H100 SXM 80GB (XLA GPU,
            deviceless)", "CPU (XLA CPU)").
        preset: the GPU target's preset (deviceless), or None.
        nearest: whether that preset stands in for custom hardware.
        compiler_missing: whether a GPU topology was given but XLA's GPU
            compiler is not installed (so the CPU compiles).
        config: the GPU target configuration (deviceless), or "".
        nodes, per_node: the topology's layout (deviceless).
    """

    kind: str
    label: str
    preset: str | None = None
    nearest: bool = False
    compiler_missing: bool = False
    config: str = ""
    nodes: int = 1
    per_node: int = 1

    @property
    def platform(self) -> str:
        return CPU if self.kind == CPU else GPU

    @property
    def retypes_bfloat16(self) -> bool:
        """Whether bfloat16 is compiled as float16 (`precision.py`)."""
        return self.kind == CPU

    @property
    def overlaps_by_class(self) -> bool:
        """Whether the time hides collectives by class: the CPU compiler
        schedules every collective synchronously."""
        return self.kind == CPU

    @property
    def attention(self) -> str:
        """How attention is traced (`attention.py`'s modes)."""
        return {CPU: BLOCKS, GPU_DEVICELESS: CUDNN}.get(self.kind, NATIVE)

    def compile_options(self, quick: bool = False) -> dict:
        """XLA's options for this compiler: on CPU, `deadline.py`'s memory
        scheduler and all-reduces kept apart, and with `quick` its
        `QUICK` code generation (the GPU compiler's time is not in code
        generation: the same options there)."""
        if self.kind != CPU:
            return {}
        options = {**MEMORY_SCHEDULE, **APART_ALL_REDUCES}
        return {**options, **QUICK} if quick else options

    def retarget(self, distribution: Any) -> Any:
        """`distribution` over this target's devices: the same mesh shape,
        axes and rules, each device replaced by the target's device of the
        same rank by id. Only a deviceless target changes it."""
        if self.kind != GPU_DEVICELESS:
            return distribution
        import keras
        import numpy as np
        from keras.distribution import DataParallel, ModelParallel

        mesh = distribution.device_mesh
        devices = np.asarray(mesh.backend_mesh.devices)
        order = sorted(range(devices.size),
                       key=lambda k: devices.flat[k].id)
        targets = _devices(self.config, self.nodes, self.per_node)
        mapped = np.empty(devices.size, dtype=object)
        for rank, k in enumerate(order):
            mapped[k] = targets[rank]
        new = keras.distribution.DeviceMesh(
            tuple(mesh.shape), tuple(mesh.axis_names),
            mapped.reshape(devices.shape))
        if isinstance(distribution, ModelParallel):
            return ModelParallel(
                layout_map=rebind(distribution._layout_map, new),
                batch_dim_name=distribution.batch_dim_name)
        if isinstance(distribution, DataParallel):
            return data_parallel_on(new, distribution.auto_shard_dataset)
        return distribution

    def describe(self) -> dict:
        """Plain values for the cost (`compiled_for` and what made it)."""
        return {"label": self.label, "kind": self.kind,
                "preset": self.preset, "nearest": self.nearest,
                "compiler_missing": self.compiler_missing}


def _first_device(keras_mesh: Any) -> Any:
    import numpy as np

    return np.asarray(keras_mesh.backend_mesh.devices).flat[0]


def choose(topology: Topology | None, keras_mesh: Any) -> Target:
    """The compiler and devices of a cost (see the module's docstring)."""
    device = _first_device(keras_mesh)
    if str(device.platform) in ("gpu", "cuda", "rocm"):
        return Target(GPU, f"{device.device_kind} (XLA GPU)")
    cpu = Target(CPU, "CPU (XLA CPU)")
    if topology is None:
        return cpu
    if gpu_compiler() is None:
        return replace(cpu, compiler_missing=True)
    preset = topology.name if topology.name in SPECS else \
        nearest(topology.peak("bfloat16") if _has_bfloat16(topology)
                else None, topology.memory)
    spec = SPECS[preset]
    own = preset == topology.name
    config = spec.config(
        memory=None if own else topology.memory,
        memory_bandwidth=None if own else topology.memory_bandwidth)
    label = f"{spec.label} (XLA GPU, deviceless)" if own else \
        f"custom hardware as {spec.label} (XLA GPU, deviceless)"
    return Target(GPU_DEVICELESS, label, preset, not own, False, config,
                  int(topology.nodes), int(topology.devices_per_node))


def _has_bfloat16(topology: Topology) -> bool:
    try:
        topology.peak("bfloat16")
    except KerasmeshError:
        return False
    return True
