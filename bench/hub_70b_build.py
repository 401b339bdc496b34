"""Baseline: Keras builds the 70B backbone abstractly, under StatelessScope.

The same Llama-3-70B-sized keras-hub backbone as `hub_70b_plan.R`, built in
plain Keras inside `keras.StatelessScope(initialize_variables=False)`, so
its variables have shapes but no values (allocating 141 GB is not
possible here). Reading the variables' paths and shapes is then what
`layout_plan()` starts from; Keras alone gives no plan. Prints the seconds
from after the imports until the variables are listed, their count and the
process's peak RSS.
"""

import math
import os
import resource
import time

os.environ.setdefault("KERAS_BACKEND", "jax")
os.environ["JAX_PLATFORMS"] = "cpu"

import keras  # noqa: E402
import keras_hub  # noqa: E402

from hub_70b_config import CONFIG  # noqa: E402

start = time.perf_counter()
with keras.StatelessScope(initialize_variables=False):
    model = keras_hub.models.Llama3Backbone(**CONFIG)
shapes = {v.path: tuple(v.shape) for v in model.variables}
params = sum(math.prod(s) for s in shapes.values())
print(f"seconds {time.perf_counter() - start}")
print(f"variables {len(shapes)}")
print(f"parameters {params}")
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024**2
print(f"peak_rss_gib {peak}")
