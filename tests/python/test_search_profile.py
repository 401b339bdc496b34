"""The profile (`pipeline.py`, step 3): what it compiles, in which order,
what it skips, what it reads from the cache and what the time left out;
and the parts of the cache's key it makes."""

import keras
import pytest

from kerasmesh.core import kinds
from kerasmesh.core.errors import KerasmeshError
from kerasmesh.search import profile
from kerasmesh.search.profile import Profiler, code_version, model_signature
from search_fakes import cost_result, figures, mesh_layouts, settings, space
from small_models import mlp


def write(path, text):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def test_the_code_version_follows_the_cost_and_the_figures_code(
        tmp_path, monkeypatch):
    monkeypatch.setattr(profile, "__file__",
                        str(tmp_path / "search" / "profile.py"))
    write(tmp_path / "search" / "figures.py", "figures")
    write(tmp_path / "cost" / "hlo.py", "hlo")
    first = code_version()
    write(tmp_path / "search" / "solve.py", "not what makes figures")
    write(tmp_path / "cost" / "notes.txt", "not code")
    assert code_version() == first
    seen = {first}
    for path, text in (("cost/hlo.py", "hlo, changed"),
                       ("cost/schedule.py", "a new module"),
                       ("search/figures.py", "figures, changed")):
        write(tmp_path / path, text)
        seen.add(code_version())
    assert len(seen) == 4


def test_the_code_version_of_the_shim_is_a_stable_hash():
    assert code_version() == code_version()
    assert len(code_version()) == 64


def test_a_models_signature_ignores_its_tensors_names():
    a, b = mlp(), mlp()
    assert a.inputs[0].name != b.inputs[0].name
    assert model_signature(a) == model_signature(b)
    assert model_signature(a)["inputs"] == [[[None, 32], "float32"]]


def test_a_models_signature_changes_with_its_variables_and_policy():
    inputs = keras.Input((32,))
    wider = keras.Model(inputs, keras.layers.Dense(
        16, name="dense_1")(keras.layers.Dense(128, name="dense")(inputs)),
        name="mlp")
    assert model_signature(wider) != model_signature(mlp())
    keras.config.set_dtype_policy("mixed_bfloat16")
    try:
        mixed = mlp()
    finally:
        keras.config.set_dtype_policy("float32")
    assert model_signature(mixed)["variables"] == \
        model_signature(mlp())["variables"]
    assert model_signature(mixed) != model_signature(mlp())


def test_a_models_signature_changes_with_its_compiled_optimizer():
    # `optimizer = None` costs the model's own: two searches of one model
    # compiled with Adam and with a LossScaleOptimizer share no figures.
    plain, scaled = mlp(), mlp()
    plain.compile(optimizer=keras.optimizers.Adam(), loss="mse")
    scaled.compile(optimizer=keras.optimizers.LossScaleOptimizer(
        keras.optimizers.Adam()), loss="mse")
    assert model_signature(plain)["variables"] == \
        model_signature(scaled)["variables"]
    assert model_signature(plain) != model_signature(scaled)
    assert model_signature(plain) != model_signature(mlp())
    again = mlp()
    again.compile(optimizer=keras.optimizers.Adam(), loss="mse")
    assert model_signature(again) == model_signature(plain)


# By layout: bytes and traffic at "none", then at "full". Layout 3's
# floor breaks the budget (100).
TABLE = {0: ((150, 10), (90, 12)), 1: ((50, 20), (30, 25)),
         2: ((150, 30), (60, 35))}


def profiler(mesh, budget=100.0, profile_left=None, cache_dir=None):
    s = settings(budget=budget, remats=("none", "full"), steps=(1,),
                 models={None: mlp()}, profile_left=profile_left,
                 cache_dir=cache_dir)
    sp = space(mesh_layouts(4, keras_mesh=mesh,
                            floor=lambda c: 200.0 if c[0] == 3 else 0.0))
    return Profiler(s, sp)


@pytest.fixture
def compiles(monkeypatch):
    """`Profiler._compile` from `TABLE`; the (layout, remat) compiled."""
    calls = []

    def compile_(self, m, layout, remat, depth, k):
        calls.append((layout, remat))
        memory, traffic = TABLE[layout][remat == "full"]
        return figures(temp=memory, weights=traffic)

    monkeypatch.setattr(Profiler, "_compile", compile_)
    return calls


def test_the_profile_compiles_the_first_remat_then_what_can_still_win(
        mesh, compiles):
    p = profiler(mesh)
    p.run()
    # Every layout at "none" in order, but layout 3 (its floor alone
    # breaks the budget); then "full" only where the least traffic could
    # beat 20, the best that fits: layout 0 (10), whose "full" fits at
    # 12, which layout 2 (30) can't beat.
    assert compiles == [(0, "none"), (1, "none"), (2, "none"), (0, "full")]
    assert p.pruned == [(0, 3)]
    assert sorted(p.profiles) == [(0, 0), (0, 1), (0, 2)]
    assert [(e["layout"], e["remat"]) for e in p.log] == compiles
    assert not p.stopped and p.unprofiled == []


def test_the_profile_is_the_same_each_time(mesh, compiles):
    first = profiler(mesh)
    first.run()
    again = profiler(mesh)
    again.run()
    n = len(compiles) // 2
    assert compiles[:n] == compiles[n:]
    assert {k: p.figures for k, p in first.profiles.items()} == \
        {k: p.figures for k, p in again.profiles.items()}


def test_a_second_profile_reads_every_figure_from_the_cache(
        mesh, compiles, tmp_path):
    cold = profiler(mesh, cache_dir=str(tmp_path))
    cold.run()
    n = len(compiles)
    warm = profiler(mesh, cache_dir=str(tmp_path))
    warm.run()
    assert len(compiles) == n
    assert all(e["cached"] for e in warm.log) and len(warm.log) == n
    assert warm.cache.report()["hits"] == n
    assert {k: p.figures for k, p in warm.profiles.items()} == \
        {k: p.figures for k, p in cold.profiles.items()}


def test_out_of_time_the_profile_lists_every_layout_it_left_out(
        mesh, compiles):
    p = profiler(mesh, profile_left=-1.0)
    p.run()
    assert compiles == [] and p.stopped
    assert p.unprofiled == [(0, 0, "none"), (0, 1, "none"), (0, 2, "none")]


def fake_layout_cost(monkeypatch, failure_at):
    """`layout_cost()` that raises `failure_at` {call: error} and
    otherwise returns `cost_result()`."""
    calls = []

    def layout_cost(*args, **kwargs):
        calls.append(kwargs["remat"])
        if len(calls) in failure_at:
            raise failure_at[len(calls)]
        return cost_result(need=40.0)

    monkeypatch.setattr(profile.cost, "layout_cost", layout_cost)
    return calls


def test_a_layout_xla_refuses_is_marked_and_the_profile_goes_on(
        mesh, monkeypatch):
    fake_layout_cost(monkeypatch, {2: KerasmeshError(kinds.COMPILE, "no")})
    p = profiler(mesh)
    p.run()
    assert p.profiles[(0, 1)].failed and not p.profiles[(0, 1)].figures
    assert p.profiles[(0, 0)].figures[("none", None)].memory == 40.0
    assert p.profiles[(0, 2)].figures and not p.stopped


def test_a_compile_out_of_time_stops_the_profile(mesh, monkeypatch):
    calls = fake_layout_cost(
        monkeypatch, {2: KerasmeshError(kinds.TIMEOUT, "late")})
    p = profiler(mesh)
    p.run()
    assert len(calls) == 2 and p.stopped
    assert p.profiles[(0, 0)].figures and not p.profiles[(0, 1)].failed
    assert p.unprofiled == [(0, 1, "none"), (0, 2, "none")]
