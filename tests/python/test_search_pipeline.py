"""search_layout(): profile, solve, verify. It finds the exhaustive
optimum, extrapolates honestly from reduced depths, never reports a false
fit, says what it could not profile in time, reuses its cache, and on a
topology chooses the mesh, its device order and the levers."""

import itertools
import warnings

import keras
import pytest

from kerasmesh.cost import layout_cost as cost
from kerasmesh.search import pipeline as search
from kerasmesh.core.errors import KerasmeshError

keras_hub = pytest.importorskip("keras_hub")


def mlp():
    inputs = keras.Input((32,))
    # A hidden width of 6 that only the "data" axis (2) divides: 5
    # placements per kernel, 25 layouts with the biases pinned.
    hidden = keras.layers.Dense(6, name="dense")(inputs)
    outputs = keras.layers.Dense(16, name="dense_1")(hidden)
    return keras.Model(inputs, outputs, name="mlp")


def biases_pinned(mesh):
    fixed = keras.distribution.LayoutMap(mesh)
    fixed[".*bias"] = (None,)
    return fixed


def one_kernel_free(mesh):
    """Biases and the second kernel pinned: 5 layouts."""
    fixed = biases_pinned(mesh)
    fixed["dense_1/kernel"] = (None, None)
    return fixed


def verified(r):
    return r["cost"]["need"], sum(r["cost"]["collectives"]["bytes"])


def traffic(cost):
    return sum(cost["collectives"]["bytes"])


def base(candidates):
    """The configurations without levers: one per layout."""
    return [c for c in candidates
            if c["remat"] == "none" and c["accumulation_steps"] == 1]


@pytest.fixture(scope="module")
def exhaustive(mesh):
    return search.search_layout(mlp, mesh, 16, "sgd", "mse",
                                fixed=biases_pinned(mesh))


def test_a_small_space_is_profiled_exhaustively(exhaustive):
    assert exhaustive["method"] == "exhaustive"
    layouts = base(exhaustive["candidates"])
    assert len(layouts) == exhaustive["space_size"] == 25
    assert exhaustive["compiles"] == 25 + 1  # the profile, the verification
    # Micro-batches only add traffic here: the winner has none, and the
    # least traffic of every layout, by XLA's own figures.
    assert exhaustive["accumulation_steps"] == 1
    assert verified(exhaustive)[1] == min(c["traffic"] for c in layouts)
    assert exhaustive["verified"] and exhaustive["stopped"] is None


def test_why_names_each_levers_best_rival(exhaustive):
    why = exhaustive["why"]
    assert why["binds"] == "objective" and why["faster"] is None
    assert why["levers"]["mesh"] is None  # a mesh given: nothing else
    rival = why["levers"]["accumulation_steps"]
    assert rival["layout"] == exhaustive["candidates"][0]["layout"]
    assert rival["accumulation_steps"] == 2 and rival["ratio"] > 1


def test_a_repeated_search_reads_its_figures_from_the_cache(mesh, tmp_path):
    cold = search.search_layout(mlp, mesh, 16, "sgd", "mse",
                                fixed=biases_pinned(mesh),
                                cache_dir=str(tmp_path))
    warm = search.search_layout(mlp, mesh, 16, "sgd", "mse",
                                fixed=biases_pinned(mesh),
                                cache_dir=str(tmp_path))
    # The profile's 25 compiles and the full-depth one, all kept.
    assert cold["cache"]["misses"] == 26 and cold["cache"]["hits"] == 0
    assert warm["cache"]["hits"] == 26 and warm["compiles"] == 0
    assert warm["cost"]["need"] == cold["cost"]["need"]
    assert warm["rules"] == cold["rules"]
    assert warm["candidates"] == cold["candidates"]


def test_no_false_fits_under_a_budget_the_best_layout_breaks(mesh):
    free = search.search_layout(mlp, mesh, 16, "sgd", "mse",
                                fixed=one_kernel_free(mesh))
    budget = verified(free)[0] - 1
    r = search.search_layout(mlp, mesh, 16, "sgd", "mse",
                             fixed=one_kernel_free(mesh), memory=budget)
    memory, traffic = verified(r)
    assert memory <= budget
    fitting = [c["traffic"] for c in free["candidates"]
               if c["memory"] <= budget]
    assert traffic == min(fitting)
    # What the result reports is what XLA says of its rules.
    lm = keras.distribution.LayoutMap(mesh)
    for key, axes in r["rules"]:
        lm[key] = tuple(axes)
    again = cost.layout_cost(mlp, keras.distribution.ModelParallel(
        layout_map=lm, batch_dim_name="data"), 16, "sgd", "mse")
    assert again["xla"]["total"] == memory


def test_a_budget_nothing_fits_names_the_smallest_memory(mesh):
    with pytest.raises(KerasmeshError) as e:
        search.search_layout(mlp, mesh, 16, "sgd", "mse", memory=100,
                             fixed=one_kernel_free(mesh))
    assert e.value.kind == "search_no_fit"
    assert "least memory" in str(e.value) and "layout" in str(e.value)


def test_a_batch_the_mesh_can_not_split_is_the_planners_error(mesh):
    with pytest.raises(KerasmeshError) as e:
        search.search_layout(mlp, mesh, 15, "sgd", "mse")
    assert e.value.kind == "batch_size"


def test_bad_objectives_and_budgets_are_classed_errors(mesh):
    for kwargs in ({"objective": "speed"}, {"memory": 0}, {"memory": -1},
                   {"objective": "time", "bandwidth": {"data": 1e9}},
                   {"objective": "time", "flop_rate": 1e12,
                    "bandwidth": {"data": 1e9, "model": 1e9}}):
        if kwargs.get("flop_rate"):
            kwargs["flop_rate"] = -1
        with pytest.raises(KerasmeshError) as e:
            search.search_layout(mlp, mesh, 16, **kwargs)
        assert e.value.kind == "argument"


def test_the_time_objective_weighs_slow_axes(mesh):
    r = search.search_layout(mlp, mesh, 16, "sgd", "mse",
                             fixed=one_kernel_free(mesh), objective="time",
                             bandwidth={"data": 1e12, "model": 1e3},
                             flop_rate=1e12)
    ops = r["cost"]["collectives"]
    assert all("model" not in a for a in ops["axes"])


def test_the_timeout_stops_the_profile_and_says_what_is_missing(mesh):
    r = search.search_layout(mlp, mesh, 16, "sgd", "mse", timeout=4,
                             fixed=biases_pinned(mesh))
    assert r["seconds"] < 15
    assert r["stopped"] == "timeout"
    assert r["unprofiled"] and r["profiled"] < 25
    with pytest.raises(KerasmeshError) as e:
        search.search_layout(mlp, mesh, 16, "sgd", "mse", timeout=0.01)
    assert e.value.kind == "timeout"


def tiny_llama(n):
    return keras_hub.models.LlamaBackbone(
        vocabulary_size=256, num_layers=n, num_query_heads=8,
        num_key_value_heads=4, hidden_dim=32, intermediate_dim=64)


def test_reduced_depths_extrapolate_linearly_to_the_full_model(mesh):
    r = search.search_layout(
        tiny_llama, mesh, 8, "sgd", None,
        {"token_ids": [16], "padding_mask": [16]}, blocks=4,
        fixed=_only_a_norm_free(mesh))
    assert r["depths"] == [1, 2] and r["blocks"] == 4
    assert r["method"] == "exhaustive" and r["space_size"] == 3
    predicted, actual = r["predicted"], r["cost"]
    assert traffic(actual) == pytest.approx(predicted["traffic"], rel=0.01)
    assert actual["need"] == pytest.approx(predicted["memory"], rel=0.05)
    assert max(r["linearity"].values()) <= 0.05


def test_a_builder_of_two_blocks_is_searched_whole(mesh):
    r = search.search_layout(
        tiny_llama, mesh, 8, "sgd", None,
        {"token_ids": [16], "padding_mask": [16]}, blocks=2,
        fixed=_only_a_norm_free(mesh))
    assert r["depths"] == [2] and r["blocks"] is None
    assert r["predicted"]["memory"] == r["cost"]["need"]


def _only_a_norm_free(mesh):
    """Every class pinned unsplit but the blocks' last norm (3 layouts)."""
    fixed = keras.distribution.LayoutMap(mesh)
    fixed["token_embedding/(reverse_)?embeddings"] = (None, None)
    fixed[".*(sequence_output|self_attention)_layernorm/scale"] = (None,)
    fixed[".*self_attention/.*kernel"] = (None, None, None)
    fixed[".*feedforward_.*_dense/kernel"] = (None, None)
    return fixed


def test_exhaustive_choices_cover_the_space(mesh):
    from kerasmesh.search.space import SearchSpace

    space = SearchSpace(mlp(), mesh, biases_pinned(mesh))
    free = [space.classes[i].options for i in space.free]
    assert space.size() == len(list(itertools.product(*free)))


def test_a_builder_of_unnamed_layers_is_a_warning(mesh):
    from kerasmesh.core.errors import KerasmeshWarning

    def unnamed():
        return keras.Sequential([keras.Input((32,)), keras.layers.Dense(8)])

    with pytest.warns(KerasmeshWarning, match="other paths") as record:
        search.search_layout(unnamed, mesh, 16, "sgd", "mse")
    assert record[0].message.kind == "search_unstable_paths"
    with warnings.catch_warnings():
        warnings.simplefilter("error", KerasmeshWarning)
        search.search_layout(mlp, mesh, 16, "sgd", "mse",
                             fixed=one_kernel_free(mesh))


def wide():
    """Two 256 x 256 kernels (49 layouts): their weights outweigh the
    step's activations."""
    inputs = keras.Input((256,))
    hidden = keras.layers.Dense(256, use_bias=False, name="a")(inputs)
    outputs = keras.layers.Dense(256, use_bias=False, name="b")(hidden)
    return keras.Model(inputs, outputs, name="wide")


def test_layouts_whose_weights_break_the_budget_are_spared(mesh):
    everything = search.search_layout(wide, mesh, 8, "sgd", "mse")
    assert everything["pruned"] == 0
    budget = 300e3  # under one replicated kernel and a 2-way split one
    r = search.search_layout(wide, mesh, 8, "sgd", "mse", memory=budget)
    assert r["pruned"] > 0
    assert len(base(r["candidates"])) + r["pruned"] == \
        len(base(everything["candidates"]))
    best = min(c["traffic"] for c in everything["candidates"]
               if c["memory"] <= budget)
    assert traffic(r["cost"]) == best
    assert r["cost"]["need"] <= budget


def test_out_of_time_before_the_full_compile_returns_the_best_so_far(mesh):
    import time

    def slow_at_full_depth(n):
        if n == 4:
            time.sleep(60)
        return tiny_llama(n)

    began = time.monotonic()
    r = search.search_layout(
        slow_at_full_depth, mesh, 8, "sgd", None,
        {"token_ids": [16], "padding_mask": [16]}, blocks=4,
        fixed=_only_a_norm_free(mesh), timeout=20)
    assert time.monotonic() - began < 30
    assert r["verified"] is False and r["stopped"] == "timeout"
    assert r["cost"] is None and r["predicted"]["memory"] > 0
    assert r["linearity"] is None


def test_out_of_time_to_verify_keeps_the_predicted_best(mesh, monkeypatch):
    from kerasmesh.search import verify as search_verify

    def out_of_time(self, candidate):
        raise KerasmeshError("timeout", "Costing took longer than 0.4 s.")

    monkeypatch.setattr(search_verify.Verifier, "cost", out_of_time)
    r = search.search_layout(mlp, mesh, 16, "sgd", "mse",
                             fixed=one_kernel_free(mesh))
    assert r["verified"] is False and r["stopped"] == "timeout"
    assert r["cost"] is None
    best = min(c["traffic"] for c in r["candidates"])
    assert r["predicted"]["traffic"] == best
