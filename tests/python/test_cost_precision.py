"""bfloat16 costed at 2 bytes on XLA's CPU backend, as GPUs run it."""

import keras
import pytest

from kerasmesh.cost import layout_cost as cost
from kerasmesh.cost import precision, target


@pytest.fixture(scope="module")
def mesh():
    return keras.distribution.DeviceMesh(
        (2, 4), ("data", "model"), keras.distribution.list_devices())


def two_dense(policy):
    """Dense 64 -> 128 -> 64 in `policy`: with the first kernel's columns
    and the second's rows on "model", the second layer's partial sums are
    all-reduced over "model": an activation collective."""
    def build():
        inputs = keras.Input((64,))
        h = keras.layers.Dense(128, name="d1", dtype=policy)(inputs)
        out = keras.layers.Dense(64, name="d2", dtype=policy)(h)
        return keras.Model(inputs, out, name="two_dense")
    return build


def costs(mesh, policy):
    lm = keras.distribution.LayoutMap(mesh)
    lm[".*d1.*kernel"] = (None, "model")
    lm[".*d2.*kernel"] = ("model", None)
    d = keras.distribution.ModelParallel(layout_map=lm, batch_dim_name="data")
    return cost.layout_cost(two_dense(policy), d, 16, "adam", "mse")


def activation_all_reduce(result):
    (op,) = [o for o in result["ops"] if o["collective"] == "all-reduce"
             and o["axes"] == ["model"]]
    return op


@pytest.fixture(scope="module")
def by_policy(mesh):
    return {p: costs(mesh, p) for p in
            ("float32", "float16", "bfloat16", "mixed_float16",
             "mixed_bfloat16")}


@pytest.mark.parametrize("policy", ["bfloat16", "mixed_bfloat16"])
def test_bfloat16_activation_collectives_are_half_the_float32_ones(
        by_policy, policy):
    f32 = activation_all_reduce(by_policy["float32"])
    bf16 = activation_all_reduce(by_policy[policy])
    assert f32["dtypes"] == ["f32"] and bf16["dtypes"] == ["bf16"]
    assert bf16["bytes"] == f32["bytes"] / 2 == 1024


@pytest.mark.parametrize("policy", ["bfloat16", "mixed_bfloat16"])
def test_bfloat16_temporaries_are_those_of_float16_not_float32(
        by_policy, policy):
    half = policy.replace("bfloat16", "float16")
    assert by_policy[policy]["xla"]["temp"] == by_policy[half]["xla"]["temp"]
    # Not half: Adam's update keeps float32 temporaries of its own (the
    # slots are float32 under every policy), which CPU's memory-optimized
    # scheduler leaves a larger share of the total.
    assert by_policy[policy]["xla"]["temp"] < \
        0.85 * by_policy["float32"]["xla"]["temp"]
    assert by_policy[policy]["bfloat16"] == precision.AS_FLOAT16
    assert by_policy[policy]["compute_dtype"] == "bfloat16"


def test_steps_without_bfloat16_are_compiled_as_they_are(by_policy):
    assert by_policy["float32"]["bfloat16"] == precision.ABSENT
    assert by_policy["mixed_float16"]["bfloat16"] == precision.ABSENT
    assert activation_all_reduce(by_policy["mixed_float16"])["dtypes"] == \
        ["f16"]


def test_without_the_retyping_the_cpu_widens_bfloat16(mesh, monkeypatch):
    monkeypatch.setattr(precision, "retype_bfloat16",
                        lambda lowered, on_cpu: (precision.WIDENED, None))
    widened = costs(mesh, "mixed_bfloat16")
    assert activation_all_reduce(widened)["dtypes"] == ["f32"]
    assert activation_all_reduce(widened)["bytes"] == 2048
    assert widened["bfloat16"] == precision.WIDENED


def test_a_retyped_step_xla_refuses_is_compiled_as_it_was(mesh, monkeypatch):
    calls = []
    compile_within = cost.compile_within

    def refuse_once(lowered, *args):
        calls.append(1)
        if len(calls) == 1:
            raise RuntimeError("INTERNAL: refused")
        return compile_within(lowered, *args)

    monkeypatch.setattr(cost, "compile_within", refuse_once)
    result = costs(mesh, "mixed_bfloat16")
    assert len(calls) == 2
    assert result["bfloat16"] == precision.WIDENED
    assert activation_all_reduce(result)["bytes"] == 2048


def test_other_compilers_keep_bfloat16_as_it_is(mesh, monkeypatch):
    monkeypatch.setattr(target.Target, "retypes_bfloat16", False)
    result = costs(mesh, "mixed_bfloat16")
    assert result["bfloat16"] == precision.NATIVE


def test_float16_of_the_model_itself_is_not_renamed():
    ops = [{"dtypes": ["f16", "f32"]}]
    assert precision.rename_dtypes(ops, (None, True))[0]["dtypes"] == \
        ["f16", "f32"]
    assert precision.rename_dtypes(ops, (None, False))[0]["dtypes"] == \
        ["bf16", "f32"]
    assert precision.rename_dtypes(ops, None)[0]["dtypes"] == ["bf16", "f32"]


def test_a_quick_compile_retypes_bfloat16_the_same_way(mesh, by_policy):
    lm = keras.distribution.LayoutMap(mesh)
    lm[".*d1.*kernel"] = (None, "model")
    lm[".*d2.*kernel"] = ("model", None)
    d = keras.distribution.ModelParallel(layout_map=lm, batch_dim_name="data")
    quick = cost.layout_cost(two_dense("mixed_bfloat16"), d, 16, "adam",
                             "mse", quick=True)
    full = by_policy["mixed_bfloat16"]
    assert quick["bfloat16"] == precision.AS_FLOAT16
    assert quick["xla"] == full["xla"]
    assert [o["bytes"] for o in quick["ops"]] == \
        [o["bytes"] for o in full["ops"]]
