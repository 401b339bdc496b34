"""The end of a search: figures, the pick, and a budget nothing fits."""

import time

import pytest

from kerasmesh.search import result as search_result
from kerasmesh.core.errors import KerasmeshError


def fake_cost(memory, traffic_by_axes):
    axes = list(traffic_by_axes)
    return {"xla": {"total": memory}, "need": memory,
            "collectives": {"axes": axes,
                            "bytes": [traffic_by_axes[a] for a in axes]},
            "flops": 10.0}


def test_figures_sum_traffic_by_axes():
    f = search_result.figures(fake_cost(100.0, {"data": 3.0, "model": 4.0}))
    assert f == {"memory": 100.0, "traffic": 7.0,
                 "by_axes": {"data": 3.0, "model": 4.0}, "flops": 10.0}


class FakeSpace:
    def rules(self, choice):
        return [("dense/kernel", [None, "model"])] if choice[0] else []


class FakeSearch:
    """Two costed choices at full depth, under a budget of 50 bytes."""

    def __init__(self, budget, depth=None):
        self.budget, self.depth, self.space = budget, depth, FakeSpace()
        self.models = {None: None}
        self.costs = {(0,): fake_cost(80.0, {"data": 1.0}),
                      (1,): fake_cost(60.0, {"model": 5.0})}
        self.seen = {c: search_result.figures(r)
                     for c, r in self.costs.items()}

    def score(self, f):
        if self.budget is None or f["memory"] <= self.budget:
            return (0, f["traffic"], f["memory"])
        return (1, f["memory"], f["traffic"])


class FakeVerifier(search_result.Verifier):
    """Full-depth costs from a table instead of XLA; records what it
    compiled."""

    def __init__(self, search, full_costs=None, deadline=None,
                 timeout=None):
        super().__init__(search, None, search.depth,
                         time.monotonic() + 60 if deadline is None
                         else deadline, timeout)
        self.full_costs = full_costs or search.costs
        self.compiled = []

    def _compile(self, choice):
        self.compiled.append(choice)
        return self.full_costs[choice]


def test_the_pick_is_the_least_traffic_that_fits():
    s = FakeSearch(budget=None)
    winner, runners = search_result.pick(s, FakeVerifier(s))
    assert winner == (0,) and runners == [(1,)]
    s = FakeSearch(budget=70.0)
    verify = FakeVerifier(s)
    winner, runners = search_result.pick(s, verify)
    assert winner == (1,) and runners == []
    # Over budget by the search's own full-depth compile: not compiled again.
    assert verify.compiled == [(1,)]


def test_a_predicted_fit_that_the_full_compile_breaks_is_not_a_fit():
    s = FakeSearch(budget=70.0, depth=8)
    full = {(0,): fake_cost(65.0, {"data": 1.0}),
            (1,): fake_cost(75.0, {"model": 5.0})}
    verify = FakeVerifier(s, full)
    winner, runners = search_result.pick(s, verify)
    # (1,) was predicted to fit but does not; (0,) was predicted not to.
    assert winner == (0,) and runners == []
    assert verify.compiled == [(1,), (0,)]


def test_a_runner_up_out_of_time_leaves_the_winner():
    class OutOfTime(FakeVerifier):
        def _compile(self, choice):
            if self.compiled:
                raise KerasmeshError("timeout", "Costing took too long.")
            return super()._compile(choice)

    s = FakeSearch(budget=None)
    winner, runners = search_result.pick(s, OutOfTime(s))
    assert winner == (0,) and runners == []


def test_runners_up_wait_for_time_left():
    s = FakeSearch(budget=None)
    verify = FakeVerifier(s, deadline=time.monotonic() - 1)
    winner, runners = search_result.pick(s, verify)
    assert winner == (0,) and runners == [] and verify.compiled == [(0,)]


def test_a_budget_nothing_fits_names_the_smallest_memory_and_its_rules():
    s = FakeSearch(budget=50.0)
    with pytest.raises(KerasmeshError) as e:
        search_result.pick(s, FakeVerifier(s))
    assert e.value.kind == "memory_budget"
    assert "60 bytes" in str(e.value)
    assert '"dense/kernel" = (None, model)' in str(e.value)


class WinnerOutOfTime(FakeVerifier):
    def _compile(self, choice):
        self.compiled.append(choice)
        raise KerasmeshError("timeout", "Costing took longer than 0.4 s.")


def test_out_of_time_for_the_winner_leaves_the_best_so_far():
    s = FakeSearch(budget=70.0)
    verify = WinnerOutOfTime(s, timeout=30)
    winner, runners = search_result.pick(s, verify)
    assert winner == (1,) and runners == [] and verify.costs == {}


def test_out_of_time_with_nothing_known_to_fit_names_the_timeout():
    s = FakeSearch(budget=50.0, depth=8)
    with pytest.raises(KerasmeshError) as e:
        search_result.pick(s, WinnerOutOfTime(s, timeout=30))
    assert e.value.kind == "timeout"
    assert "in 30 s" in str(e.value) and "0.4" not in str(e.value)
