"""The layouts a search chooses among: classes, options, rules."""

import keras
import pytest

from kerasmesh.core.errors import KerasmeshError
from kerasmesh.core.resolve import RuleResolver
from kerasmesh.search.space import SearchSpace, class_options

keras_hub = pytest.importorskip("keras_hub")


@pytest.fixture(scope="module")
def mesh():
    return keras.distribution.DeviceMesh(
        (2, 4), ("batch", "model"), keras.distribution.list_devices())


@pytest.fixture(scope="module")
def llama():
    return keras_hub.models.LlamaBackbone(
        vocabulary_size=256, num_layers=3, num_query_heads=8,
        num_key_value_heads=2, hidden_dim=32, intermediate_dim=64)


def test_options_split_each_dimension_on_one_axis_that_divides_it():
    sizes = {"batch": 2, "model": 4}
    assert class_options("k", [6], sizes) == [(None,), ("batch",)]
    opts = class_options("k", [4, 8], sizes)
    assert opts[0] == (None, None)
    assert ("model", "model") not in opts
    assert len(opts) == 7


def test_classes_abstract_block_numbers_and_keys_match_every_block(
        mesh, llama):
    space = SearchSpace(llama, mesh)
    query = [c for c in space.classes if c.template.endswith("query/kernel")]
    assert len(query) == 1 and len(query[0].paths) == 3
    resolver = RuleResolver([query[0].key])
    assert all(resolver.resolve(p)[0] == 0 for p in query[0].paths)
    assert sum(len(c.paths) for c in space.classes) == len(space.paths)


def test_rules_are_fewest_and_match_only_their_variables(mesh, llama):
    space = SearchSpace(llama, mesh)
    tp = {"feedforward_gate_dense/kernel": (None, "model"),
          "feedforward_intermediate_dense/kernel": (None, "model")}
    choice = tuple(
        next((c.options.index(a) for t, a in tp.items()
              if c.template.endswith(t)), 0) for c in space.classes)
    rules = space.rules(choice)
    assert len(rules) == 1
    key, axes = rules[0]
    assert axes == [None, "model"]
    hits = [p for p in space.paths if RuleResolver([key]).resolve(p)[0] == 0]
    assert len(hits) == 6
    assert space.rules(tuple([0] * len(space.classes))) == []


def test_the_start_is_read_through_the_planners_placement(mesh, llama):
    space = SearchSpace(llama, mesh)
    hub = keras_hub.models.LlamaBackbone.get_layout_map(mesh)
    choice = space.start_choice(hub)
    axes = dict(zip((c.template for c in space.classes), space.axes(choice)))
    assert axes["token_embedding/embeddings"] == ("model", "batch")


def test_fixed_rules_are_pinned_and_bad_ones_are_classed_errors(mesh, llama):
    fixed = keras.distribution.LayoutMap(mesh)
    fixed["token_embedding/embeddings"] = (None, None)
    space = SearchSpace(llama, mesh, fixed)
    pinned = [c for c in space.classes if c.fixed is not None]
    assert [c.template for c in pinned] == ["token_embedding/embeddings"]
    some = keras.distribution.LayoutMap(mesh)
    some["transformer_layer_0/self_attention/query/kernel"] = (
        None, "model", None)
    with pytest.raises(KerasmeshError) as e:
        SearchSpace(llama, mesh, some)
    assert e.value.kind == "search_fixed"
    nothing = keras.distribution.LayoutMap(mesh)
    nothing["no/such/kernel"] = (None, "model")
    with pytest.raises(KerasmeshError, match="matches no variable"):
        SearchSpace(llama, mesh, nothing)
    bad = keras.distribution.LayoutMap(mesh)
    bad["token_embedding/embeddings"] = ("model", "model")
    with pytest.raises(KerasmeshError) as e:
        SearchSpace(llama, mesh, bad)
    assert e.value.kind == "search_fixed"


def alternating(n=6):
    """Dense layers "dense_0" ... of widths 8, 16, 8, ...: two kernel
    classes (16 x 8 and 8 x 16) whose paths differ only in numbers."""
    layers = [keras.Input((16,))]
    layers += [keras.layers.Dense(8 if i % 2 == 0 else 16, name=f"dense_{i}")
               for i in range(n)]
    return keras.Sequential(layers, name="net")


def test_classes_of_one_template_get_keys_that_tell_them_apart(mesh):
    from kerasmesh.core.placer import Placer

    space = SearchSpace(alternating(), mesh)
    kernels = [i for i, c in enumerate(space.classes)
               if c.template == "net/dense_#/kernel"]
    assert len(kernels) == 2
    keys = [space.classes[i].key for i in kernels]
    assert keys[0] != keys[1]
    for i in kernels:
        c = space.classes[i]
        hits = {p for p in space.paths
                if RuleResolver([c.key]).resolve(p)[0] == 0}
        assert hits == set(c.paths)
    # Every pair of placements of the two classes is a layout map that
    # places each kernel as chosen.
    a, b = (space.classes[i] for i in kernels)
    for ka, kb in [(1, 2), (2, 1), (1, 0), (0, 1), (3, 3)]:
        choice = [0] * len(space.classes)
        choice[kernels[0]], choice[kernels[1]] = ka, kb
        placer = Placer(space.layout_map(tuple(choice)))
        for c, k in ((a, ka), (b, kb)):
            for p in c.paths:
                assert tuple(placer.place(p, c.shape).axes) == c.options[k]
