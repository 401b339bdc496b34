"""What XLA's GPU compiler is told of each preset's GPU, and the preset
that stands in for hardware of your own."""

import jax
import numpy as np
import pytest

from kerasmesh.cost import target
from kerasmesh.cost.gpu_targets import SPECS, nearest
from test_cost_target import gpu_compiler_or_skip


def test_the_nearest_preset_goes_by_compute_then_memory():
    assert nearest(989e12, 141e9) == "h200-sxm-141gb"
    assert nearest(989e12, 80e9) == "h100-sxm-80gb"
    assert nearest(312e12, 200e9) == "a100-sxm-80gb"
    assert nearest(None, 150e9) == "h200-sxm-141gb"


@pytest.mark.parametrize("preset", sorted(SPECS))
def test_each_presets_target_compiles_a_sharded_step(preset):
    gpu_compiler_or_skip()
    import jax.numpy as jnp
    from jax.sharding import Mesh, NamedSharding, PartitionSpec

    devices = target._devices(SPECS[preset].config(), 2, 4)
    assert [d.id for d in devices] == list(range(8))
    mesh = Mesh(np.array(devices).reshape(2, 4), ("data", "model"))
    x = jax.ShapeDtypeStruct((64, 128), jnp.bfloat16, sharding=NamedSharding(
        mesh, PartitionSpec("data", "model")))
    compiled = jax.jit(lambda a: (a @ a.T).sum()).lower(x).compile()
    assert compiled.memory_analysis().argument_size_in_bytes == \
        64 * 128 * 2 / 8
    assert "all-reduce" in compiled.as_text()


def test_a_custom_figure_replaces_the_presets_in_its_target():
    config = SPECS["h100-sxm-80gb"].config(memory=96e9,
                                           memory_bandwidth=2.4e12)
    assert "device_memory_size: 96000000000" in config
    assert "memory_bandwidth: 2400000000000" in config
    assert "core_count: 132" in config
    assert 'device_description_str: "NVIDIA H100 80GB HBM3"' in config
