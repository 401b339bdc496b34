"""Baseline for planning: build the book's model in Keras to read variables.

16000 -> Dense 64000 relu -> Dense 8000 sigmoid: 1,536,072,000 parameters,
allocated (6.1 GB in float32) on one CPU device. Prints wall seconds, the
parameter count and the process's peak RSS.
"""

import math
import os
import resource
import time

os.environ.setdefault("KERAS_BACKEND", "jax")
os.environ["JAX_PLATFORMS"] = "cpu"

start = time.perf_counter()
import keras  # noqa: E402

inputs = keras.Input((16000,))
hidden = keras.layers.Dense(64000, activation="relu")(inputs)
outputs = keras.layers.Dense(8000, activation="sigmoid")(hidden)
model = keras.Model(inputs, outputs)
params = sum(math.prod(v.shape) for v in model.variables)
paths = [v.path for v in model.variables]
print(f"seconds {time.perf_counter() - start}")
print(f"parameters {params}")
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024**2
print(f"peak_rss_gib {peak}")
