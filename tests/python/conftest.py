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
