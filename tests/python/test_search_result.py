"""The end of a search as plain values: the mesh in its order, the
levers, the distribution's layout map, what each mesh reached."""

import keras
import pytest

from kerasmesh.search import entry as search
from test_search_entry import tensor_parallel, topology, tp_mlp


def test_a_figure_off_the_line_is_a_warning():
    from kerasmesh.core.errors import KerasmeshWarning
    from kerasmesh.search.result import linearity

    full = {"xla": {"total": 100.0}, "need": 100.0,
            "collectives": {"axes": ["data"], "bytes": [10.0]}}
    assert linearity(None, full) is None
    assert linearity({"memory": 101.0, "traffic": 10.0}, full)["memory"] \
        == pytest.approx(0.01)
    with pytest.warns(KerasmeshWarning, match="not linear"):
        linearity({"memory": 150.0, "traffic": 10.0}, full)
@pytest.fixture(scope="module")
def found(mesh):
    return search.search_layout(tp_mlp, None, 2, "sgd", "mse",
                                fixed=tensor_parallel(mesh),
                                topology=topology(2, 4, inter=1e6))


def test_the_result_names_the_mesh_its_order_and_the_levers(found):
    assert found["mesh"]["axis_names"] == ["data", "model"]
    assert isinstance(found["mesh"]["mesh"], keras.distribution.DeviceMesh)
    assert found["device_order"] in ("model", "data")
    assert (found["remat"], found["accumulation_steps"]) == ("none", 1)
    assert found["micro_batch_size"] == 2
    assert found["batch_dim_name"] == "data"
    assert found["layout_map"]["keys"]


def test_the_result_keeps_every_mesh_and_candidate(found):
    meshes = {m["mesh"]: m for m in found["meshes"]}
    assert set(meshes) == {"2x4", "1x8"}  # a batch of 2: data 1 or 2
    assert meshes["2x4"]["orders"] == ["model", "data"]
    assert all({"mesh", "remat", "accumulation_steps", "reshardings"} <=
               set(c) for c in found["candidates"])
    assert found["cost"]["time"]["total"] == pytest.approx(
        min(m["value"] for m in found["meshes"]))


def test_runners_up_hold_every_rule_as_the_winner_does(found, mesh):
    fixed = set(tensor_parallel(mesh).keys())
    assert found["runners_up"]
    for facts in [found] + found["runners_up"]:
        assert fixed <= {pattern for pattern, _ in facts["rules"]}
