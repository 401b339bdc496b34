"""A Llama-shaped training step on one H100: measured, beside kerasmesh's
figures for it.

    python3 bench/gpu/step_time.py measure OUT.csv      # on the GPU
    python3 bench/gpu/step_time.py deviceless OUT.csv   # on CPUs
    python3 bench/gpu/step_time.py cpu OUT.csv          # on CPUs
    python3 bench/gpu/step_time.py tiny OUT.csv         # CPU smoke test

`measure` builds each configuration (`CONFIGS`) on the GPU, costs it with
`layout_cost()` on that GPU (XLA's GPU compiler with the device: memory,
FLOPs and kerasmesh's modeled step time, `h100.json`'s topology), then
trains it: `WARMUP` steps, then `STEPS` steps timed (each
`train_on_batch()` returns host values, so each step has finished), and
JAX's peak bytes in use. `deviceless` costs the same configurations
compiled for the H100 without one (the compiler kerasmesh uses on
machines without GPUs, XLA's GPU compiler installed); `cpu` as kerasmesh
costs them where that compiler is not installed (XLA's CPU compiler);
`tiny` runs `measure`'s code on a small model and the CPU, to check this
script where no GPU is. One CSV row a configuration; `check.sh` measures
on the GPU, and `compare.py` joins its rows with `deviceless.csv` and
`cpu.csv`, made on CPUs.
"""

from __future__ import annotations

import csv
import json
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "inst", "python"))
os.environ.setdefault("KERAS_BACKEND", "jax")

WARMUP, STEPS = 3, 10

# Llama-3-8B's widths (hub's Llama3Backbone), cut to a few blocks so that
# weights, Adam's state and the step fit one 80 GB GPU.
LLAMA_8B = {"vocabulary_size": 128256, "num_query_heads": 32,
            "num_key_value_heads": 8, "hidden_dim": 4096,
            "intermediate_dim": 14336}
CONFIGS = [
    {"name": "llama8b_1block_2x4096", "model": LLAMA_8B, "blocks": 1,
     "batch": 2, "sequence": 4096, "remat": "none"},
    {"name": "llama8b_2blocks_2x4096", "model": LLAMA_8B, "blocks": 2,
     "batch": 2, "sequence": 4096, "remat": "none"},
    {"name": "llama8b_2blocks_2x4096_full", "model": LLAMA_8B, "blocks": 2,
     "batch": 2, "sequence": 4096, "remat": "full"},
]
TINY = [{"name": "tiny", "model": {"vocabulary_size": 256,
                                   "num_query_heads": 4,
                                   "num_key_value_heads": 2,
                                   "hidden_dim": 64, "intermediate_dim": 128},
         "blocks": 2, "batch": 2, "sequence": 32, "remat": "none"}]


def build(config):
    import keras_hub

    backbone = keras_hub.models.Llama3Backbone(
        **config["model"], num_layers=config["blocks"],
        dtype="mixed_bfloat16")
    return keras_hub.models.Llama3CausalLM(backbone=backbone,
                                           preprocessor=None)


def loss():
    import keras

    return keras.losses.SparseCategoricalCrossentropy(from_logits=True)


def figures(config, distribution):
    """kerasmesh's cost of the configuration's step on `h100.json`."""
    from kerasmesh.cost.layout_cost import layout_cost

    with open(os.path.join(HERE, "h100.json"), encoding="utf-8") as f:
        topology = json.load(f)
    shapes = {"token_ids": [config["sequence"]],
              "padding_mask": [config["sequence"]]}
    r = layout_cost(lambda: build(config), distribution, config["batch"],
                    "adam", loss(), shapes, timeout=1200,
                    remat=config["remat"], topology=topology)
    return {"modeled_s": r["time"]["total"], "need_gb": r["need"] / 1e9,
            "flops": r["flops"], "compiled_for": r["compiled_for"]["label"],
            "attention": r["attention"]}


def measured(config):
    """Seconds per step and peak GB of the configuration, trained."""
    import jax
    import keras
    import numpy as np

    from kerasmesh.remat.choice import set_remat

    model = build(config)
    if config["remat"] != "none":
        set_remat(model, config["remat"])
    model.compile(optimizer="adam", loss=loss())
    rng = np.random.default_rng(0)
    tokens = rng.integers(0, config["model"]["vocabulary_size"],
                          (config["batch"], config["sequence"]))
    x = {"token_ids": tokens,
         "padding_mask": np.ones_like(tokens, dtype="int32")}
    for _ in range(WARMUP):
        model.train_on_batch(x, tokens)
    began = time.perf_counter()
    for _ in range(STEPS):
        model.train_on_batch(x, tokens)
    seconds = (time.perf_counter() - began) / STEPS
    stats = jax.devices()[0].memory_stats() or {}
    keras.backend.clear_session()
    return {"measured_s": seconds,
            "peak_gb": stats.get("peak_bytes_in_use", float("nan")) / 1e9}


def main(mode, out):
    if mode in ("deviceless", "cpu"):
        from kerasmesh.core.platforms import cpu_without_gpus

        cpu_without_gpus()  # no GPU here: JAX on the CPU, quietly
    import keras

    if mode == "cpu":
        from kerasmesh.cost import target

        target.gpu_compiler = lambda: None  # as where it is not installed

    configs = TINY if mode == "tiny" else CONFIGS
    device = keras.distribution.list_devices()[0]
    distribution = keras.distribution.DataParallel(devices=[device])
    rows = []
    for config in configs:
        row = {"config": config["name"], "mode": mode, "device": device}
        row.update(figures(config, distribution))
        if mode in ("measure", "tiny"):
            row.update(measured(config))
        rows.append(row)
        print(json.dumps(row), flush=True)
    with open(out, "w", newline="", encoding="utf-8") as f:
        writer = csv.DictWriter(f, sorted({k for r in rows for k in r}))
        writer.writeheader()
        writer.writerows(rows)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
