"""Plain Keras baseline: model-parallel training on a 2x4 mesh of CPUs.

Prints one line per repetition: "steps_per_second <value>".
Usage: python throughput.py REPS
"""

import os
import sys
import time

os.environ.setdefault("KERAS_BACKEND", "jax")
os.environ["JAX_PLATFORMS"] = "cpu"
os.environ["XLA_FLAGS"] = "--xla_force_host_platform_device_count=8"

import keras  # noqa: E402
import numpy as np  # noqa: E402

from throughput_config import (BATCH, EPOCH_STEPS, HIDDEN, INPUTS,  # noqa
                               OUTPUTS)


def main(reps: int) -> None:
    mesh = keras.distribution.DeviceMesh((2, 4), ["data", "model"])
    layout = keras.distribution.LayoutMap(mesh)
    layout[".*dense.*kernel"] = (None, "model")
    layout[".*dense.*bias"] = ("model",)
    keras.distribution.set_distribution(
        keras.distribution.ModelParallel(layout_map=layout,
                                         batch_dim_name="data"))
    keras.utils.set_random_seed(1)
    model = keras.Sequential([
        keras.Input((INPUTS,)),
        keras.layers.Dense(HIDDEN, activation="relu"),
        keras.layers.Dense(HIDDEN, activation="relu"),
        keras.layers.Dense(OUTPUTS),
    ])
    model.compile(optimizer="adam", loss="mse")
    rng = np.random.default_rng(1)
    n = BATCH * EPOCH_STEPS
    x = rng.standard_normal((n, INPUTS), dtype=np.float32)
    y = rng.standard_normal((n, OUTPUTS), dtype=np.float32)
    model.fit(x, y, batch_size=BATCH, epochs=1, verbose=0)  # compile
    for _ in range(reps):
        start = time.perf_counter()
        model.fit(x, y, batch_size=BATCH, epochs=1, verbose=0)
        print(f"steps_per_second {EPOCH_STEPS / (time.perf_counter() - start)}",
              flush=True)


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 3)
