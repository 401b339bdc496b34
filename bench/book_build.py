"""Baseline for planning: build the book's model in Keras to read variables.

16000 -> Dense 64000 relu -> Dense 8000 sigmoid: 1,536,072,000 parameters,
allocated (6.1 GB in float32) on one CPU device. Prints the seconds from
after `import keras` until the variables exist (the same span
`layout_plan()` is timed over), the parameter count and the process's
peak RSS.
"""

import math
import os
import resource
import time

os.environ.setdefault("KERAS_BACKEND", "jax")
os.environ["JAX_PLATFORMS"] = "cpu"

import keras  # noqa: E402

start = time.perf_counter()

inputs = keras.Input((16000,))
hidden = keras.layers.Dense(64000, activation="relu")(inputs)
outputs = keras.layers.Dense(8000, activation="sigmoid")(hidden)
model = keras.Model(inputs, outputs)
for v in model.variables:  # JAX dispatches asynchronously: wait for them
    v.value.block_until_ready()
params = sum(math.prod(v.shape) for v in model.variables)
paths = [v.path for v in model.variables]
print(f"seconds {time.perf_counter() - start}")
print(f"parameters {params}")
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024**2
print(f"peak_rss_gib {peak}")
