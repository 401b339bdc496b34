"""Benchmark: the search's layout families against the exhaustive optimum.

A Dense MLP 32 -> 6 -> 16 on the 2 x 4 mesh, biases pinned: 25 layouts.
The search profiles all of them (a space under `tuning.EXHAUSTIVE`), and
again with only its layout families (the threshold set to 0, as on a
large space). Prints "name value" lines: both optima's traffic and how
many layouts each profiled.
"""

import os
import sys

os.environ.setdefault("KERAS_BACKEND", "jax")
os.environ.setdefault("JAX_PLATFORMS", "cpu")
os.environ["XLA_FLAGS"] = (os.environ.get("XLA_FLAGS", "") +
                           " --xla_force_host_platform_device_count=8")
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "inst",
                                "python"))

import keras  # noqa: E402

from kerasmesh.search import families  # noqa: E402
from kerasmesh.search import pipeline  # noqa: E402


def mlp():
    inputs = keras.Input((32,))
    hidden = keras.layers.Dense(6, name="dense")(inputs)
    return keras.Model(inputs, keras.layers.Dense(16, name="dense_1")(hidden))


mesh = keras.distribution.DeviceMesh((2, 4), ("data", "model"),
                                     keras.distribution.list_devices())
fixed = keras.distribution.LayoutMap(mesh)
fixed[".*bias"] = (None,)
for name, limit in (("exhaustive", families.EXHAUSTIVE), ("families", 0)):
    families.EXHAUSTIVE = limit
    r = pipeline.search_layout(mlp, mesh, 16, "sgd", "mse", fixed=fixed,
                               accumulation_steps=1)
    print(f"{name}_traffic {sum(r['cost']['collectives']['bytes'])}")
    print(f"{name}_costed {r['profiled']}")
