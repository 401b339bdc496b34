"""Rule keys that could backtrack without bound are refused before use."""

import os
import subprocess
import sys
import textwrap

import keras
import pytest

from kerasmesh.plan import planner as plan
from kerasmesh.core.errors import KerasmeshError
from kerasmesh.layout_map.rules import check_key, lookup
from kerasmesh.core.patterns import MAX_UNBOUNDED, check_safe, unsafe_reason

HERE = os.path.dirname(__file__)

CATASTROPHIC = ["(a+)+$", "(a*)*", "(a|a)*b", "(a|aa)*b", "(.*a){12}b",
                "(x+x+)+y", "([a-z]+/)*kernel",
                ".*a" * MAX_UNBOUNDED + ".*b"]
FINE = [".*dense.*kernel", "dense.*bias", "sequential/dense/kernel",
        ".*attention/(query|key|value)/kernel", "(?i).*ATTENTION_NORM/GAMMA",
        ".*/moe_1/expert_[0-9]+/kernel", "(dense|conv)+/kernel", "(a|b)*c",
        "a++b", "(?>a+)+b", "(?:.*/)?dense/kernel",
        "transformer/encoder_block_1/adapter/.*/bias"]


def run_isolated(code, timeout=30):
    """Run `code` in a fresh Python, failing (not hanging) past `timeout`."""
    env = dict(os.environ, PYTHONPATH=os.path.join(HERE, "..", "..", "inst",
                                                   "python"))
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)],
                          env=env, timeout=timeout, capture_output=True,
                          text=True, check=True).stdout


@pytest.mark.parametrize("key", CATASTROPHIC)
def test_catastrophic_keys_are_refused_naming_the_key(key):
    assert unsafe_reason(key) is not None
    with pytest.raises(KerasmeshError) as e:
        check_key(key)
    assert e.value.kind == "layout_key"
    assert f'"{key}"' in e.value.message


@pytest.mark.parametrize("key", FINE)
def test_ordinary_keys_pass(key):
    assert unsafe_reason(key) is None
    assert check_safe(key) == key


def test_a_keras_layout_map_with_a_catastrophic_key_fails_fast():
    """Keys set on a Keras LayoutMap directly are checked before matching."""
    out = run_isolated("""
        import os
        os.environ.setdefault("KERAS_BACKEND", "jax")
        import keras
        from kerasmesh.core.errors import KerasmeshError
        from kerasmesh.layout_map.rules import lookup
        from kerasmesh.plan.planner import plan_layout
        mesh = keras.distribution.DeviceMesh(
            (1,), ("data",), keras.distribution.list_devices()[:1])
        lm = keras.distribution.LayoutMap(mesh)
        lm["(a+)+$"] = (None,)
        kinds = []
        try:
            lookup(lm, "a" * 5000 + "!")
        except KerasmeshError as e:
            kinds.append(e.kind)
        model = keras.Sequential([keras.Input((4,)),
                                  keras.layers.Dense(2, name="a" * 3000)])
        try:
            plan_layout(model, lm)
        except KerasmeshError as e:
            kinds.append(e.kind)
        print(" ".join(kinds))
    """)
    assert out.split() == ["layout_key", "layout_key"]


def test_lookup_of_safe_keys_still_resolves():
    mesh = keras.distribution.DeviceMesh(
        (2, 4), ("data", "model"), keras.distribution.list_devices())
    lm = keras.distribution.LayoutMap(mesh)
    lm[".*dense.*kernel"] = (None, "model")
    assert lookup(lm, "sequential/dense/kernel")["key"] == ".*dense.*kernel"
    assert plan.plan_layout(
        keras.Sequential([keras.Input((4,)), keras.layers.Dense(8)]),
        lm)["variables"]["rule"][0] == ".*dense.*kernel"
