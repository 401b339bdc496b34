"""The end of a search: why the winner won (what binds it, each lever's
best rival) and how far the extrapolation was off the full compile."""

import warnings

import pytest

from kerasmesh.core import kinds
from kerasmesh.core.errors import KerasmeshWarning
from kerasmesh.cost.recompute import Levers
from kerasmesh.search.result import LEVERS, linearity, why
from kerasmesh.search.solve import Candidate, Prediction
from search_fakes import cost_result, mesh_layouts, space

SPACE = space(mesh_layouts(2, nodes={"model": [0] * 8,
                                     "data": [0, 1] * 4}),
              mesh_layouts(2, shape=(1, 8)))


def at(value, memory=50.0, fits=True, mesh=0, order="model", layout=0,
       remat="none", k=1):
    return Prediction(Candidate(mesh, layout, None if mesh else order,
                                Levers(remat, k)), memory, value, fits)


def ranked(*predictions):
    return sorted(predictions, key=lambda p: p.key)


WINNER = at(1.0)
RIVALS = {"layout": at(1.2, layout=1),
          "device_order": at(1.5, order="data"),
          "remat": at(1.3, remat="full"),
          "accumulation_steps": at(1.1, k=2),
          "mesh": at(2.0, mesh=1, layout=1, k=2)}
# Better than every rival, but it differs from the winner in three
# levers: a rival of none.
MIXED = at(1.05, order="data", layout=1, k=2)


def test_each_levers_rival_is_the_best_that_differs_in_it_alone():
    seen = why(SPACE, WINNER, ranked(WINNER, MIXED, *RIVALS.values()))
    assert set(seen["levers"]) == set(LEVERS)
    for lever, rival in RIVALS.items():
        entry = seen["levers"][lever]
        assert (entry["value"], entry["memory"]) == (rival.value,
                                                    rival.memory)
        assert entry["ratio"] == pytest.approx(rival.value)
    assert seen["levers"]["device_order"]["device_order"] == "data"
    assert seen["levers"]["mesh"]["mesh"] == "1x8"
    assert seen["levers"]["remat"]["remat"] == "full"


def test_a_lever_without_a_rival_is_none():
    seen = why(SPACE, WINNER, ranked(WINNER, MIXED))
    assert seen["levers"] == {lever: None for lever in LEVERS}


def test_the_budget_binds_when_a_faster_configuration_breaks_it():
    faster = at(0.5, memory=300.0, fits=False, layout=1, k=4)
    seen = why(SPACE, WINNER, ranked(WINNER, faster, *RIVALS.values()))
    assert seen["binds"] == "memory"
    assert seen["faster"]["value"] == 0.5 and not seen["faster"]["fits"]
    assert seen["faster"]["ratio"] == 0.5


def test_the_objective_binds_when_what_breaks_the_budget_is_slower():
    slower = at(3.0, memory=300.0, fits=False, layout=1)
    seen = why(SPACE, WINNER, ranked(WINNER, slower))
    assert seen["binds"] == "objective" and seen["faster"] is None


def test_as_fast_with_fewer_levers_over_the_budget_binds_it_too():
    winner = at(1.0, remat="full")
    plain = at(1.0, memory=300.0, fits=False)
    assert why(SPACE, winner, ranked(winner, plain))["binds"] == "memory"
    assert why(SPACE, WINNER, ranked(
        WINNER, at(1.0, memory=300.0, fits=False, remat="full")
    ))["binds"] == "objective"


def test_a_prediction_off_the_line_warns_at_the_profiles_micro_batches():
    with pytest.warns(KerasmeshWarning, match="not linear") as w:
        off = linearity({"memory": 150.0, "traffic": 10.0}, cost_result(), 1)
    assert w[0].message.kind == kinds.SEARCH_EXTRAPOLATION
    assert off == {"memory": pytest.approx(0.5), "traffic": 0.0}


def test_a_prediction_near_the_compile_or_at_other_micro_batches_is_quiet():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert linearity({"memory": 101.0, "traffic": 10.0}, cost_result(),
                         1)["memory"] == pytest.approx(0.01)
        # At 2 micro-batches the traffic is per global batch (2 x 10);
        # memory scaled by the micro-batch only the full compile decides.
        off = linearity({"memory": 150.0, "traffic": 20.0},
                        cost_result(k=2), 1)
    assert off == {"memory": pytest.approx(0.5), "traffic": 0.0}
