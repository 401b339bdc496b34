"""What XLA's GPU compiler needs to know of a GPU to compile for it.

XLA compiles for a GPU it does not have from a target configuration (a
`GpuTargetConfig` in protobuf text): the figures its passes read, such as
the number of streaming multiprocessors and their shared memory (kernel
tiling), the device memory (the latency-hiding scheduler's memory limit)
and the compute capability (which kernels exist: cuDNN's fused attention
needs 8.0 or later). `SPECS` holds them for each preset of
`device_topology()`, from NVIDIA's datasheets and the H100 and A100
architecture whitepapers; the device memory is the capacity the CUDA
driver reports (a little less than the datasheet's figure), as in XLA's
own GPU specifications (`xla/backends/gpu/target_config/specs/`).

A topology of custom hardware compiles with the nearest preset's
configuration (`nearest()`: by peak bfloat16 FLOP/s, then memory), its
own memory and memory bandwidth written in.
"""

from __future__ import annotations

import math
from dataclasses import dataclass


@dataclass(frozen=True)
class GpuSpec:
    """One GPU, as XLA's GPU compiler sees it.

    Attributes:
        description: the device's name, as the driver gives it.
        label: a short name for print-outs ("H100 SXM 80GB").
        cores: streaming multiprocessors.
        fpus_per_core: FP32 units per multiprocessor.
        shared_memory_per_core, shared_memory_per_block_optin: bytes.
        l2_cache: bytes.
        clock_ghz: the boost clock.
        memory: bytes of device memory the driver reports.
        memory_bandwidth: bytes/s.
        compute_capability: (major, minor).
        peak_bfloat16: dense FLOP/s, for `nearest()`.
    """

    description: str
    label: str
    cores: int
    fpus_per_core: int
    shared_memory_per_core: int
    shared_memory_per_block_optin: int
    l2_cache: int
    clock_ghz: float
    memory: int
    memory_bandwidth: float
    compute_capability: tuple[int, int]
    peak_bfloat16: float

    def config(self, memory: float | None = None,
               memory_bandwidth: float | None = None) -> str:
        """The target configuration in protobuf text, with another memory
        or memory bandwidth where given."""
        major, minor = self.compute_capability
        fields = [
            ("threads_per_block_limit", 1024), ("threads_per_warp", 32),
            ("shared_memory_per_block", 49152),
            ("shared_memory_per_core", self.shared_memory_per_core),
            ("threads_per_core_limit", 2048), ("core_count", self.cores),
            ("fpus_per_core", self.fpus_per_core),
            ("block_dim_limit_x", 2147483647), ("block_dim_limit_y", 65535),
            ("block_dim_limit_z", 65535),
            ("memory_bandwidth", int(memory_bandwidth or
                                     self.memory_bandwidth)),
            ("l2_cache_size", self.l2_cache),
            ("clock_rate_ghz", self.clock_ghz),
            ("device_memory_size", int(memory or self.memory)),
            ("shared_memory_per_block_optin",
             self.shared_memory_per_block_optin),
            ("registers_per_core_limit", 65536),
            ("registers_per_block_limit", 65536),
        ]
        body = "\n".join(f"  {k}: {v}" for k, v in fields)
        return (f"gpu_device_info {{\n{body}\n"
                f"  cuda_compute_capability {{ major: {major} "
                f"minor: {minor} }}\n}}\n"
                'platform_name: "CUDA"\n'
                "dnn_version_info { major: 9 minor: 8 patch: 0 }\n"
                f'device_description_str: "{self.description}"\n')


_HOPPER = dict(cores=132, fpus_per_core=128, shared_memory_per_core=233472,
               shared_memory_per_block_optin=232448, l2_cache=52428800,
               clock_ghz=1.98, compute_capability=(9, 0),
               peak_bfloat16=989e12)

SPECS: dict[str, GpuSpec] = {
    "h100-sxm-80gb": GpuSpec("NVIDIA H100 80GB HBM3", "H100 SXM 80GB",
                             memory=84942979072, memory_bandwidth=3.35e12,
                             **_HOPPER),
    "h200-sxm-141gb": GpuSpec("NVIDIA H200 141GB HBM3e", "H200 SXM 141GB",
                              memory=151397597184, memory_bandwidth=4.8e12,
                              **_HOPPER),
    "a100-sxm-80gb": GpuSpec(
        "NVIDIA A100-SXM4-80GB", "A100 SXM 80GB", cores=108,
        fpus_per_core=64, shared_memory_per_core=167936,
        shared_memory_per_block_optin=166912, l2_cache=41943040,
        clock_ghz=1.41, memory=85100068864, memory_bandwidth=2.039e12,
        compute_capability=(8, 0), peak_bfloat16=312e12),
}


def nearest(peak_bfloat16: float | None, memory: float) -> str:
    """The preset nearest a GPU of these figures: the closest peak
    bfloat16 FLOP/s (on a log scale), then the closest memory."""
    def distance(name: str) -> tuple[float, float]:
        spec = SPECS[name]
        flops = abs(math.log(peak_bfloat16 / spec.peak_bfloat16)) \
            if peak_bfloat16 else 0.0
        return (round(flops, 6), abs(math.log(memory / spec.memory)))
    return min(sorted(SPECS), key=distance)
