"""Benchmark: resolving 10,000 variable paths against 100 layout rules.

Compares kerasmesh's resolver (each rule compiled once, rules joined into one
alternation, the loop in the shim) with Keras's own `LayoutMap.__getitem__`
(an exact-key lookup, then `re.fullmatch(key, path)` for every key) over the
same paths, and checks that both give the same rule for every path.

Run from the repository root:

    ~/.virtualenvs/r-keras/bin/python bench/layout_resolution.py
"""

import os
import re
import sys
import time

os.environ.setdefault("KERAS_BACKEND", "jax")
os.environ.setdefault("JAX_PLATFORMS", "cpu")
os.environ["XLA_FLAGS"] = (os.environ.get("XLA_FLAGS", "") +
                           " --xla_force_host_platform_device_count=8").strip()
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "inst", "python"))

import keras  # noqa: E402

from kerasmesh.core.resolve import RuleResolver  # noqa: E402

N_PATHS = 10_000
N_RULES = 100
REPEATS = 3


def make_paths(n):
    """Paths of a deep transformer: 40 variables per block."""
    parts = ["attention/query/kernel", "attention/query/bias",
             "attention/key/kernel", "attention/key/bias",
             "attention/value/kernel", "attention/value/bias",
             "attention/output/kernel", "attention/output/bias",
             "attention_norm/gamma", "attention_norm/beta",
             "ffn/intermediate/kernel", "ffn/intermediate/bias",
             "ffn/output/kernel", "ffn/output/bias",
             "ffn_norm/gamma", "ffn_norm/beta",
             "adapter/down/kernel", "adapter/down/bias",
             "adapter/up/kernel", "adapter/up/bias"]
    paths = []
    block = 0
    while len(paths) < n:
        for sub in ("encoder", "decoder"):
            for p in parts:
                paths.append(f"transformer/{sub}_block_{block}/{p}")
        block += 1
    paths = paths[:n - 2] + ["transformer/token_embedding/embeddings",
                             "transformer/position_embedding/embeddings"]
    return paths


def make_rules(n):
    """Rules as people write them: per-block overrides, wildcards, a few
    exact keys, and rules that match nothing."""
    rules = [
        (".*token_embedding/embeddings", (None, "model")),
        ("transformer/position_embedding/embeddings", (None, "model")),
        (".*attention/(query|key|value)/kernel", (None, "model")),
        (".*attention/output/kernel", ("model", None)),
        (".*ffn/intermediate/kernel", (None, "model")),
        (".*ffn/output/kernel", ("model", None)),
        (".*ffn/intermediate/bias", ("model",)),
        # Overlaps ".*ffn/output/kernel" for one path: Keras raises there.
        (".*decoder_block_1/ffn/output/kernel", ("model", None)),
        # Global flags and groups can't be joined: matched one by one.
        ("(?i).*ATTENTION_NORM/GAMMA", ("model",)),
        ("(transformer)/\\1_unused", ("model",)),
    ]
    block = 0
    while len(rules) < n:
        rules.append((f"transformer/decoder_block_{block}/adapter/up/kernel",
                      ("model", None)))
        rules.append((f".*encoder_block_{block}/adapter/down/kernel",
                      (None, "model")))
        rules.append((f"transformer/encoder_block_{block}/adapter/.*/bias",
                      ("model",)))
        rules.append((f".*/moe_{block}/expert_[0-9]+/kernel",
                      ("model", None, None)))
        block += 1
    return rules[:n]


def keras_rule(layout_map, layout_keys, path):
    try:
        layout = layout_map[path]
    except ValueError:
        return "<several>"
    return None if layout is None else layout_keys[id(layout)]


def best_of(fn):
    times = []
    for _ in range(REPEATS):
        re.purge()  # no help from the re module's cache of patterns
        start = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - start)
    return min(times), out


def main():
    mesh = keras.distribution.DeviceMesh(
        (2, 4), ("data", "model"), keras.distribution.list_devices())
    layout_map = keras.distribution.LayoutMap(mesh)
    rules = make_rules(N_RULES)
    for key, axes in rules:
        layout_map[key] = axes
    keys = list(layout_map)
    layout_keys = {id(layout_map[k]): k for k in keys}
    paths = make_paths(N_PATHS)

    def ours():
        resolver = RuleResolver(keys)
        out = []
        for path in paths:
            index, clash = resolver.resolve(path)
            out.append("<several>" if clash else
                       None if index is None else keys[index])
        return out

    t_keras, expected = best_of(
        lambda: [keras_rule(layout_map, layout_keys, p) for p in paths])
    t_ours, got = best_of(ours)

    disagree = [(p, e, g) for p, e, g in zip(paths, expected, got) if e != g]
    matched = sum(g is not None for g in got)
    print(f"{len(paths)} paths, {len(keys)} rules "
          f"({matched} paths matched a rule, "
          f"{sum(g == '<several>' for g in got)} several)")
    print(f"Keras LayoutMap lookups: {t_keras:8.3f} s")
    print(f"kerasmesh resolver:      {t_ours:8.3f} s "
          "(includes compiling the rules)")
    print(f"ratio (Keras / kerasmesh): {t_keras / t_ours:6.1f}x")
    # Machine-readable lines for bench/run.R.
    print(f"kerasmesh_seconds {t_ours:.6f}")
    print(f"keras_seconds {t_keras:.6f}")
    if disagree:
        print(f"DISAGREE on {len(disagree)} paths, e.g. {disagree[:3]}")
        sys.exit(1)
    print("results agree rule for rule")
    if t_ours >= 1:
        print("FAIL: kerasmesh took 1 s or more")
        sys.exit(1)


if __name__ == "__main__":
    main()
