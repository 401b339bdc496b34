"""Layout plans: resolution, problems and byte counts, from shapes alone."""

import re

import keras
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kerasmesh.plan import planner as plan
from kerasmesh.core.errors import KerasmeshError
from kerasmesh.core.resolve import RuleResolver


@pytest.fixture(scope="module")
def mesh():
    return keras.distribution.DeviceMesh(
        (2, 4), ("data", "model"), keras.distribution.list_devices())


def layout_map(mesh, **rules):
    lm = keras.distribution.LayoutMap(mesh)
    for key, axes in rules.items():
        lm[key] = axes
    return lm


def rules(mesh, pairs):
    lm = keras.distribution.LayoutMap(mesh)
    for key, axes in pairs:
        lm[key] = axes
    return lm


def book_model():
    inputs = keras.Input((16000,))
    hidden = keras.layers.Dense(64000, activation="relu")(inputs)
    outputs = keras.layers.Dense(8000, activation="sigmoid")(hidden)
    return keras.Model(inputs, outputs)


def small_sequential(units=8, name=None):
    return keras.Sequential([keras.Input((4,)), keras.layers.Dense(units)],
                            name=name)


def problems_of(result, kind):
    return [p for p in result["problems"] if p["kind"] == kind]


# -- resolution -------------------------------------------------------------

def keras_lookup(layout_map, path):
    """Keras's own answer: the key whose layout it returns, or an error."""
    try:
        layout = layout_map[path]
    except ValueError:
        return "ambiguous"
    if layout is None:
        return None
    return next(k for k in layout_map if layout_map[k] is layout)


def ours(keys, path):
    index, clash = RuleResolver(keys).resolve(path)
    if clash:
        return "ambiguous"
    return None if index is None else keys[index]


def test_resolver_agrees_with_keras_on_tricky_rules(mesh):
    pairs = [("dense/kernel", (None, "model")),
             (".*dense.*kernel", (None, "model")),
             (".*kernel", ("model",)),
             ("(?i).*BIAS", ("model",)),
             ("(a)\\1/.*", ("model",)),
             ("conv|pool", ("model",)),
             (".*embedding.*", (None, "model"))]
    lm = rules(mesh, pairs)
    keys = [k for k, _ in pairs]
    paths = ["dense/kernel", "seq/dense/kernel", "x/kernel", "dense/bias",
             "aa/x", "conv", "pool", "convpool", "emb", "tok_embedding/e",
             "", "dense/kernel/extra"]
    for path in paths:
        assert ours(keys, path) == keras_lookup(lm, path), path


@settings(max_examples=60, deadline=None)
@given(keys=st.lists(st.sampled_from(
           ["a", "b", "a.*", ".*b", "a|b", "(?i)A.*", "(x)y", ".*", "ab",
            "[ab]+", "a/.*", ".*/b"]), unique=True, max_size=6),
       paths=st.lists(st.text(alphabet="abAxy/", max_size=5), max_size=8))
def test_resolver_agrees_with_keras_on_random_rules(mesh, keys, paths):
    lm = rules(mesh, [(k, ("model",)) for k in keys])
    for path in paths:
        assert ours(keys, path) == keras_lookup(lm, path)


# -- the book's model -------------------------------------------------------

def test_book_model_plans_without_allocating(mesh):
    lm = layout_map(mesh, **{".*dense.*kernel": (None, "model"),
                             ".*dense.*bias": ("model",)})
    result = plan.plan_layout(book_model, lm)
    summary = result["summary"]
    assert summary["parameters"] == 1_536_072_000
    assert summary["bytes"] == 1_536_072_000 * 4
    assert summary["device_weights"] == summary["bytes"] / 4
    assert summary["replicated_weights"] == summary["bytes"]
    assert result["problems"] == []
    assert result["variables"]["shard_shape"][0] == [16000.0, 16000.0]
    assert result["variables"]["copies"] == [2, 2, 2, 2]


def test_builder_variables_stay_unallocated_and_scope_restores_state(mesh):
    from keras.src.backend.common import global_state

    built = []

    def builder():
        built.append(small_sequential())
        return built[0]

    dist = keras.distribution.DataParallel(
        devices=keras.distribution.list_devices())
    keras.distribution.set_distribution(dist)
    try:
        plan.plan_layout(builder, layout_map(mesh))
        assert keras.distribution.distribution() is dist
    finally:
        keras.distribution.set_distribution(None)
    assert all(v._value is None for v in built[0].variables)
    pending = global_state.get_global_attribute("uninitialized_variables")
    assert not any(v in pending for v in built[0].variables) \
        if pending else True


def test_adam_counts_two_slots_and_sgd_none(mesh):
    lm = layout_map(mesh, **{".*kernel": (None, "model")})
    adam = plan.plan_layout(small_sequential, lm, optimizer="adam")
    s = adam["summary"]
    assert s["optimizer"] == "Adam" and s["slots"] == 2
    assert s["device_gradients"] == s["device_weights"]
    # Slots follow their variable's layout; two scalar counters replicate.
    assert s["device_optimizer"] == 2 * s["device_weights"] + 8
    sgd = plan.plan_layout(small_sequential, lm, optimizer="sgd")
    assert sgd["summary"]["slots"] == 0
    none = plan.plan_layout(small_sequential, lm)
    assert none["summary"]["optimizer"] is None
    assert none["summary"]["device_optimizer"] == 0


def test_compiled_model_lends_its_optimizer(mesh):
    model = small_sequential()
    model.compile(optimizer=keras.optimizers.SGD(momentum=0.9), loss="mse")
    result = plan.plan_layout(model, layout_map(mesh))
    assert result["summary"]["optimizer"] == "SGD"
    assert result["summary"]["slots"] == 1


# -- problems ---------------------------------------------------------------

def test_unmatched_rule_hints_at_model_name_prefix(mesh):
    lm = layout_map(mesh, **{"dense_9/kernel": (None, "model")})
    model = keras.Sequential(
        [keras.Input((4,)), keras.layers.Dense(8, name="dense_9")],
        name="seq")
    [p] = problems_of(plan.plan_layout(model, lm), "unmatched_rule")
    assert p["severity"] == "warning" and p["rule"] == "dense_9/kernel"
    text = " ".join(t for _, t in p["bullets"])
    assert '"seq/dense_9/kernel" would match 1 variable' in text
    assert '".*dense_9/kernel" would match 1 variable' in text
    assert plan.plan_layout(model, lm)["summary"]["unmatched"] == \
        ["dense_9/kernel"]


def test_unmatched_rule_hints_at_leading_wildcard(mesh):
    lm = layout_map(mesh, **{"kernel": (None, "model")})
    [p] = problems_of(plan.plan_layout(small_sequential, lm),
                      "unmatched_rule")
    assert p["message"] == 'Rule "kernel" matches no variable.'
    assert any('".*kernel" would match 1 variable' in t
               for _, t in p["bullets"])


def test_rule_shadowed_by_exact_keys_is_never_used(mesh):
    model = small_sequential()
    kernel = model.variables[0].path
    lm = layout_map(mesh, **{kernel: (None, "model"),
                             ".*kernel": (None, "model")})
    [p] = problems_of(plan.plan_layout(model, lm), "unmatched_rule")
    assert p["rule"] == ".*kernel" and "never used" in p["message"]


def test_variable_matched_by_several_rules_is_an_error(mesh):
    lm = layout_map(mesh, **{".*dense.*": (None, "model"),
                             ".*kernel": (None, "model")})
    result = plan.plan_layout(small_sequential, lm)
    [p] = problems_of(result, "layout_ambiguous")
    assert p["severity"] == "error"
    assert re.search(r'Variable ".*/kernel" must match', p["message"])
    assert '".*dense.*" and ".*kernel"' in p["bullets"][0][1]
    assert result["summary"]["unmatched"] == []


def test_shorter_layout_warns_that_keras_pads_it(mesh):
    lm = layout_map(mesh, **{".*kernel": ("model",)})
    result = plan.plan_layout(small_sequential, lm)
    [p] = problems_of(result, "layout_rank")
    assert p["severity"] == "warning" and p["rule"] == ".*kernel"
    assert 'pads it to ("model", NA), which splits dimension 1' in \
        p["bullets"][0][1]
    assert result["variables"]["shard_shape"][0] == [1.0, 8.0]


def test_longer_layout_is_an_error(mesh):
    lm = layout_map(mesh, **{".*bias": (None, "model")})
    result = plan.plan_layout(small_sequential, lm)
    [p] = problems_of(result, "layout_rank")
    assert p["severity"] == "error"
    assert p["path"].endswith("dense/bias") or "bias" in p["path"]
    assert "has rank 1" in p["bullets"][0][1]


def test_indivisible_dimension_names_variable_dimension_and_sizes(mesh):
    lm = layout_map(mesh, **{".*kernel": (None, "model")})
    result = plan.plan_layout(lambda: small_sequential(units=6), lm)
    [p] = problems_of(result, "layout_divisibility")
    assert p["severity"] == "error" and p["path"].endswith("/kernel")
    assert p["message"].startswith('Rule ".*kernel" can\'t split variable')
    assert 'Dimension 2 has size 6, which mesh axis "model" (4)' in \
        p["bullets"][0][1]
    assert result["variables"]["problem"][0] == \
        "dimension 2 (6) not divisible by 4"


def test_axis_not_in_mesh_is_an_error(mesh):
    other = keras.distribution.DeviceMesh(
        (8,), ("shard",), keras.distribution.list_devices())
    lm = layout_map(mesh)
    lm[".*kernel"] = keras.distribution.TensorLayout((None, "shard"), other)
    [p] = problems_of(plan.plan_layout(small_sequential, lm), "layout_axes")
    assert p["severity"] == "error"
    assert 'Unknown axis "shard"' in p["bullets"][0][1]
    [p] = problems_of(
        plan.plan_layout(small_sequential, layout_map(mesh),
                         batch_dim_name="batch"), "layout_axes")
    assert 'Batch axis "batch"' in p["message"]


def test_batch_size_must_divide_by_the_batch_axis(mesh):
    lm = layout_map(mesh)
    [p] = problems_of(plan.plan_layout(small_sequential, lm, batch_size=5),
                      "batch_size")
    assert p["message"] == ('Batch size 5 can\'t be split evenly over batch '
                            'axis "data" (2).')
    assert "such as 4 or 6" in p["bullets"][1][1]
    assert plan.plan_layout(small_sequential, lm, batch_size=6,
                            batch_dim_name="model")["problems"][0][
        "kind"] == "batch_size"
    ok = plan.plan_layout(small_sequential, lm, batch_size=6)
    assert ok["problems"] == [] and ok["summary"]["device_batch"] == 3
    [p] = problems_of(plan.plan_layout(small_sequential, lm, batch_size=6,
                                       samples=13), "batch_size")
    assert "last batch of 1" in p["bullets"][0][1]


def test_model_must_be_a_built_model(mesh):
    with pytest.raises(KerasmeshError) as e:
        plan.plan_layout(lambda: 3, layout_map(mesh))
    assert e.value.kind == "model"
    with pytest.raises(KerasmeshError, match="must be built"):
        plan.plan_layout(keras.Sequential([keras.layers.Dense(2)]),
                         layout_map(mesh))


# -- checks at creation and before training -------------------------------

def test_batch_size_beyond_r_integers_is_refused(mesh):
    """R and reticulate 1.28 would wrap it to a negative number."""
    model = keras.Sequential([keras.Input((4,)), keras.layers.Dense(8)])
    with pytest.raises(KerasmeshError, match="at most 2,147,483,647") as e:
        plan.plan_layout(model, layout_map(mesh), batch_size=3e9)
    assert e.value.kind == "argument"
    summary = plan.plan_layout(model, layout_map(mesh),
                               batch_size=2**31 - 1)["summary"]
    assert summary["batch_size"] == 2**31 - 1


def test_parameters_are_what_keras_counts_without_seed_state(mesh):
    def build():
        return keras.Sequential([keras.Input((4,)), keras.layers.Dense(8),
                                 keras.layers.Dropout(0.5),
                                 keras.layers.Dense(2)])

    model = build()
    p = plan.plan_layout(build, layout_map(mesh))
    # The Dropout's seed generator state is a variable (listed, with its
    # bytes) but not a parameter.
    assert any("seed_generator" in path for path in p["variables"]["path"])
    assert p["summary"]["parameters"] == model.count_params() == 58


def test_a_data_parallel_distribution_plans_every_variable_replicated(mesh):
    dist = keras.distribution.DataParallel()
    p = plan.plan_layout(small_sequential, dist, batch_size=16)
    assert p["summary"]["batch_dim_name"] == "batch"
    assert p["summary"]["batch_ways"] == 8
    assert set(p["variables"]["copies"]) == {8}
    assert p["problems"] == []
    [problem] = plan.plan_layout(small_sequential, dist,
                                 batch_size=12)["problems"]
    assert problem["kind"] == "batch_size"
