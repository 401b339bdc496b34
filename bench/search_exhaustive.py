"""Benchmark: the search's walk against the exhaustive optimum.

A Dense MLP 32 -> 6 -> 16 on the 2 x 4 mesh, biases pinned: 25 layouts,
all costed by XLA (exhaustive), and the walk that search_layout() uses on
larger spaces. Prints "name value" lines: both optima's traffic and how
many layouts each costed.
"""

import os
import sys

os.environ.setdefault("KERAS_BACKEND", "jax")
os.environ.setdefault("JAX_PLATFORMS", "cpu")
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "inst",
                                "python"))

import keras  # noqa: E402

from kerasmesh.search import walk as search  # noqa: E402


def mlp():
    inputs = keras.Input((32,))
    hidden = keras.layers.Dense(6, name="dense")(inputs)
    return keras.Model(inputs, keras.layers.Dense(16, name="dense_1")(hidden))


mesh = keras.distribution.DeviceMesh((2, 4), ("data", "model"),
                                     keras.distribution.list_devices())
fixed = keras.distribution.LayoutMap(mesh)
fixed[".*bias"] = (None,)
out = {}
for name, limit in (("exhaustive", 10**6), ("walk", 0)):
    r = search.search_layout(mlp, mesh, 16, "sgd", "mse", fixed=fixed,
                             exhaustive=limit)
    out[name] = sum(r["cost"]["collectives"]["bytes"])
    print(f"{name}_traffic {out[name]}")
    print(f"{name}_costed {len(r['candidates'])}")
