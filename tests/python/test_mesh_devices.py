"""Device names: listing them by type and reading a name's type."""

import pytest

from kerasmesh.mesh import devices
from kerasmesh.core.errors import KerasmeshError


def test_the_simulated_cpu_devices_are_listed_by_name():
    names = devices.list_devices()
    assert names == [f"cpu:{i}" for i in range(8)]
    assert devices.list_devices("CPU") == names


def test_device_type_of_is_the_part_before_the_colon():
    assert devices.device_type_of("cpu:3") == "cpu"
    assert devices.device_type_of("gpu:0") == "gpu"


@pytest.mark.parametrize("bad", ["npu", 3, ["cpu"]])
def test_an_unknown_device_type_is_refused_with_the_value(bad):
    with pytest.raises(KerasmeshError) as info:
        devices.list_devices(bad)
    e = info.value
    assert e.kind == "device_type"
    assert e.bullets[0][1] == "Received {value}."
    assert "Python" not in str(e)


def test_a_known_type_without_devices_is_a_device_type_error():
    with pytest.raises(KerasmeshError) as info:
        devices.list_devices("tpu")
    assert info.value.kind == "device_type"


def test_local_cpu_device_count_once_jax_started():
    import jax

    jax.devices()
    assert devices.local_cpu_device_count() == 8
