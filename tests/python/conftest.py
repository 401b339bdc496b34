"""Eight simulated CPU devices on the JAX backend, before JAX starts."""

import os
import sys

os.environ.setdefault("KERAS_BACKEND", "jax")
os.environ.setdefault("JAX_PLATFORMS", "cpu")
os.environ["XLA_FLAGS"] = (
    os.environ.get("XLA_FLAGS", "")
    + " --xla_force_host_platform_device_count=8").strip()

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..",
                                "inst", "python"))

# Fixtures shared by several test files, found by pytest rather than
# imported into each (an imported fixture reads as an unused name).
pytest_plugins = ["checkpoint_models"]

import pytest  # noqa: E402 - after the environment JAX reads at start


@pytest.fixture(scope="session")
def mesh():
    """A 2 x 4 Keras DeviceMesh ("data" x "model") over the 8 devices."""
    import keras

    return keras.distribution.DeviceMesh(
        (2, 4), ("data", "model"), keras.distribution.list_devices())


@pytest.fixture(scope="session")
def layout_map():
    """layout_map(mesh, key=axes, ...): a Keras LayoutMap with those rules."""
    import keras

    def make(mesh, **rules):
        lm = keras.distribution.LayoutMap(mesh)
        for key, axes in rules.items():
            lm[key] = axes
        return lm

    return make
