"""Collective bytes attributed to variables and layers: name stacks
unwrapped, matched to layers by path and to variables by size, on literal
collectives and on a real compile."""

import math

import keras
import pytest

from kerasmesh.cost import attribution
from kerasmesh.cost import layout_cost as cost

VARIABLES = {
    "path": ["sequential/dense/kernel", "sequential/dense/bias",
             "mha/query/kernel", "mha/query/bias"],
    "shape": [[32, 64], [64], [32, 4, 8], [4, 8]],
    "shard_shape": [[32, 16], [16], [32, 1, 8], [1, 8]],
}


def op(names, shapes, collective="all-reduce", groups=([0, 4],)):
    total = sum(4 * math.prod(s) for s in shapes)
    return {"collective": collective, "shapes": shapes,
            "dtypes": ["f32"] * len(shapes),
            "bytes": float(total), "groups": [list(g) for g in groups],
            "axes": ["data"], "names": names}


def test_name_stacks_unwrap_to_the_layer_scopes():
    assert attribution.scope_path(
        "jit(step)/transpose(jvp(sequential))/dense/dot_general") == \
        ["sequential", "dense"]
    assert attribution.scope_path(
        "jit(step)/transpose(jvp(mha))/query/abc,cde->abde/dot_general") == \
        ["mha", "query", "abc,cde->abde"]
    assert attribution.scope_path("jit(step)/jvp(a/b)/c/add") == \
        ["a", "b", "c"]
    assert attribution.scope_path("jit(step)/jvp()/reduce_sum") == []
    assert attribution.scope_path("") == []


def test_scopes_match_layers_by_path_and_never_guess():
    layers = {("sequential",), ("sequential", "dense"), ("mha",),
              ("mha", "query")}
    match = attribution.Layers(layers).match
    assert match(["sequential", "dense"]) == ("sequential", "dense")
    # The model's name missing before the layer, or extra before it.
    assert match(["dense"]) == ("sequential", "dense")
    assert match(["outer", "mha", "query"]) == ("mha", "query")
    # A sublayer without variables: the layer around it.
    assert match(["mha", "softmax"]) == ("mha",)
    assert match(["mha", "query", "abc,cde->abde"]) == \
        ("mha", "query")
    assert match([]) is None
    assert match(["loss"]) is None
    # Two layers named "dense" in different places: ambiguous, not guessed.
    two = {("a",), ("a", "dense"), ("b",), ("b", "dense")}
    assert attribution.Layers(two).match(["dense"]) is None


def test_bytes_go_to_the_variable_of_their_size_and_the_rest_is_counted():
    ops = [
        op(["jit(step)/jvp()/reduce_sum",
            "jit(step)/transpose(jvp(sequential))/dense/dot_general",
            "jit(step)/transpose(jvp(sequential))/dense/reduce_sum"],
           [[], [16, 32], [16]]),
        # An activation gathered for the query: the layer's, no variable's.
        op(["jit(step)/jvp(mha)/query/abc,cde->abde/dot_general"],
           [[8, 8, 5]], collective="all-gather"),
        op([""], [[4, 8]], collective="all-gather"),
    ]
    out = attribution.attribute(ops, VARIABLES)
    assert out["variables"] == {
        "path": ["sequential/dense/kernel", "sequential/dense/bias"],
        "layer": ["sequential/dense", "sequential/dense"],
        "bytes": [16 * 32 * 4.0, 16 * 4.0]}
    assert out["layers"] == {"layer": ["sequential/dense", "mha/query"],
                             "bytes": [16 * 33 * 4.0, 8 * 8 * 5 * 4.0]}
    assert out["total"] == 4 + 16 * 33 * 4 + 8 * 8 * 5 * 4 + 4 * 8 * 4
    assert out["to_variables"] == 16 * 33 * 4
    assert out["to_layers"] == 16 * 33 * 4 + 8 * 8 * 5 * 4


def test_a_gathered_weight_goes_to_its_variable_whole_or_in_part():
    ops = [op(["jit(step)/jvp(mha)/query/dot_general"], [[32, 4, 8]],
              collective="all-gather", groups=([0, 1, 2, 3],)),
           op(["jit(step)/jvp(mha)/query/dot_general"], [[32, 2, 8]],
              collective="all-gather", groups=([0, 1],))]
    out = attribution.attribute(ops, VARIABLES)
    assert out["variables"]["path"] == ["mha/query/kernel"]
    assert out["to_variables"] == out["total"]


def test_no_collectives_attribute_nothing():
    out = attribution.attribute([], VARIABLES)
    assert out["total"] == out["to_variables"] == out["to_layers"] == 0
    assert out["variables"]["path"] == [] and out["layers"]["layer"] == []


@pytest.fixture(scope="module")
def compiled_cost(mesh, layout_map):
    def mlp():
        inputs = keras.Input((32,))
        hidden = keras.layers.Dense(64, activation="relu",
                                    name="dense")(inputs)
        outputs = keras.layers.Dense(16, name="dense_1")(hidden)
        return keras.Model(inputs, outputs, name="mlp")

    lm = layout_map(mesh, **{".*dense.*kernel": (None, "model"),
                             ".*dense.*bias": ("model",)})
    dist = keras.distribution.ModelParallel(layout_map=lm,
                                            batch_dim_name="data")
    return cost.layout_cost(mlp, dist, 16, optimizer="adam", loss="mse")


def test_a_model_parallel_dense_layer_owns_its_collectives(compiled_cost):
    att = compiled_cost["attribution"]
    assert att["total"] == sum(compiled_cost["collectives"]["bytes"])
    assert 0 < att["to_variables"] <= att["to_layers"] <= att["total"]
    layers = dict(zip(att["layers"]["layer"], att["layers"]["bytes"]))
    # dense's output is split over "model": dense_1 gathers it (and
    # all-reduces its gradient) over "model", dense_1's own traffic.
    gathers = [o for o in compiled_cost["ops"] if o["collective"] == "all-gather"
               and o["axes"] == ["model"]]
    assert gathers and layers["dense_1"] >= sum(o["bytes"] for o in gathers)
    # The gradients, all-reduced over "data", go to their variables.
    variables = dict(zip(att["variables"]["path"], att["variables"]["bytes"]))
    assert variables["dense/kernel"] == 32 * 16 * 4
    assert variables["dense_1/kernel"] == 64 * 4 * 4
    assert set(variables) == {"dense/kernel", "dense/bias", "dense_1/kernel",
                              "dense_1/bias"}


def test_collectives_that_move_weights_by_their_names_or_their_sizes():
    named = op(["jit(step)/transpose(jvp(sequential))/dense/dot_general"],
               [[32, 16]], "reduce-scatter")
    activation = op(["jit(step)/jvp(sequential)/dense/add"], [[8, 64, 3]])
    # XLA's combiners drop the names: each array sized as a variable's
    # shard (dense's kernel, the query bias) is a gradient reduced; one
    # array of another size makes the combined collective an activation's.
    combined = op(["", ""], [[16, 32], [8]], "reduce-scatter")
    mixed = op(["", ""], [[16, 32], [1281]])
    assert attribution.moves_weights(
        [named, activation, combined, mixed], VARIABLES) == \
        [True, False, True, False]


def test_a_whole_kernel_is_no_bias_gathered_as_many_ways():
    """Dense 8 -> 8 on 8 devices: the kernel's gradient has 64 elements,
    as many as its 8-element bias times the group; the kernel's own size
    wins."""
    variables = {"path": ["one/dense/kernel", "one/dense/bias"],
                 "shape": [[8, 8], [8]], "shard_shape": [[8, 8], [8]]}
    ops = [op(["jit(step)/transpose(jvp(one))/dense/dot_general"], [[8, 8]],
              groups=(list(range(8)),))]
    out = attribution.attribute(ops, variables)
    assert out["variables"]["path"] == ["one/dense/kernel"]
    assert out["to_variables"] == out["total"]


def test_a_reduced_activation_is_no_bias_and_a_kernel_shard_no_bias():
    """Dense 4 -> 8 -> 2 split over "model" (4): the down layer's output
    partial sums (4 x 2, all-reduced) are its activation, not its
    2-element bias times the group; up's kernel shard gradient (2 x 4,
    8 elements) is the kernel's, not up's 8-element bias."""
    variables = {"path": ["mlp/up/kernel", "mlp/up/bias",
                          "mlp/down/kernel", "mlp/down/bias"],
                 "shape": [[4, 8], [8], [8, 2], [2]],
                 "shard_shape": [[4, 2], [2], [2, 2], [2]]}
    ops = [op(["jit(step)/jvp(mlp)/down/dot_general"], [[4, 2]],
              groups=([0, 1, 2, 3],)),
           op(["jit(step)/transpose(jvp(mlp))/up/dot_general"], [[2, 4]],
              groups=([0, 4],))]
    out = attribution.attribute(ops, variables)
    assert out["variables"]["path"] == ["mlp/up/kernel"]
    assert out["layers"]["layer"] == ["mlp/down", "mlp/up"]
