"""Full-depth compiles decide: the pick, and the error when nothing
fits."""

import time

import pytest

from kerasmesh.core.errors import KerasmeshError
from kerasmesh.search import verify as search_verify
from kerasmesh.search.candidates import Context
from kerasmesh.search.figures import figures
from kerasmesh.search.levers import LeverSpace

BASE = ("none", 1)


def fake_cost(memory, traffic_by_axes):
    axes = list(traffic_by_axes)
    return {"xla": {"total": memory}, "need": memory,
            "collectives": {"axes": axes,
                            "bytes": [traffic_by_axes[a] for a in axes]},
            "flops": 10.0}


class FakeSpace:
    sizes = {"data": 2, "model": 4}

    def rules(self, choice):
        return [("dense/kernel", [None, "model"])] if choice[0] else []


class FakeOption:
    shape, nodes, label = (2, 4), {}, "2x4"


class FakeSearch:
    """Two costed choices at full depth, under `budget`."""

    def __init__(self, budget, depth=None):
        self.ctx = Context({None: None}, depth, {"batch_size": 8}, budget,
                           "traffic", time.monotonic() + 60,
                           LeverSpace(("none",), None, 8))
        self.space, self.option = FakeSpace(), FakeOption()
        self.data, self.pruned = 2, set()
        self.costs = {((0,), BASE): fake_cost(80.0, {"data": 1.0}),
                      ((1,), BASE): fake_cost(60.0, {"model": 5.0})}
        self.seen = {k: figures(r) for k, r in self.costs.items()}

    def floor(self, choice):
        return 1000.0


class FakeVerifier(search_verify.Verifier):
    """Full-depth costs from a table instead of XLA; records what it
    compiled."""

    def __init__(self, searches, full_costs=None, deadline=None,
                 timeout=None):
        super().__init__(searches, None, searches[0].ctx.depth,
                         time.monotonic() + 60 if deadline is None
                         else deadline, timeout)
        self.full_costs = full_costs or searches[0].costs
        self.compiled = []

    def _compile(self, key):
        self.compiled.append(key[1])
        self.orders[key] = None
        return self.full_costs[key[1:]]


def test_the_pick_is_the_least_traffic_that_fits():
    s = [FakeSearch(budget=None)]
    winner, runners = search_verify.pick(s, FakeVerifier(s))
    assert winner == (0, (0,), BASE) and runners == [(0, (1,), BASE)]
    s = [FakeSearch(budget=70.0)]
    verify = FakeVerifier(s)
    winner, runners = search_verify.pick(s, verify)
    assert winner == (0, (1,), BASE) and runners == []
    # Over budget by the search's own full-depth compile: not compiled again.
    assert verify.compiled == [(1,)]


def test_a_predicted_fit_that_the_full_compile_breaks_is_not_a_fit():
    s = [FakeSearch(budget=70.0, depth=8)]
    full = {((0,), BASE): fake_cost(65.0, {"data": 1.0}),
            ((1,), BASE): fake_cost(75.0, {"model": 5.0})}
    verify = FakeVerifier(s, full)
    winner, runners = search_verify.pick(s, verify)
    # (1,) was predicted to fit but does not; (0,) was predicted not to.
    assert winner == (0, (0,), BASE) and runners == []
    assert verify.compiled == [(1,), (0,)]


def test_a_runner_up_out_of_time_leaves_the_winner():
    class OutOfTime(FakeVerifier):
        def _compile(self, key):
            if self.compiled:
                raise KerasmeshError("timeout", "Costing took too long.")
            return super()._compile(key)

    s = [FakeSearch(budget=None)]
    winner, runners = search_verify.pick(s, OutOfTime(s))
    assert winner == (0, (0,), BASE) and runners == []


def test_runners_up_wait_for_time_left():
    s = [FakeSearch(budget=None)]
    verify = FakeVerifier(s, deadline=time.monotonic() - 1)
    winner, runners = search_verify.pick(s, verify)
    assert winner == (0, (0,), BASE) and runners == []
    assert verify.compiled == [(0,)]


def test_nothing_fits_names_the_smallest_memory_and_its_configuration():
    s = [FakeSearch(budget=50.0)]
    with pytest.raises(KerasmeshError) as e:
        search_verify.pick(s, FakeVerifier(s))
    assert e.value.kind == "search_no_fit"
    text = str(e.value)
    assert "60 bytes" in text and '"dense/kernel" = (None, model)' in text
    assert "mesh data = 2 x model = 4" in text and 'remat "none"' in text
    assert "1 micro-batch," in text


def test_nothing_compiled_names_the_smallest_floor():
    s = [FakeSearch(budget=50.0, depth=8)]
    s[0].seen, s[0].pruned = {}, {(0,)}
    with pytest.raises(KerasmeshError) as e:
        search_verify.pick(s, FakeVerifier(s))
    assert e.value.kind == "search_no_fit"
    assert "weights and optimizer state alone" in str(e.value)
    assert "1000 bytes" in str(e.value)


class WinnerOutOfTime(FakeVerifier):
    def _compile(self, key):
        self.compiled.append(key[1])
        raise KerasmeshError("timeout", "Costing took longer than 0.4 s.")


def test_out_of_time_for_the_winner_leaves_the_best_so_far():
    s = [FakeSearch(budget=70.0)]
    verify = WinnerOutOfTime(s, timeout=30)
    winner, runners = search_verify.pick(s, verify)
    assert winner == (0, (1,), BASE) and runners == []
    assert verify.costs == {}


def test_out_of_time_with_nothing_known_to_fit_names_the_timeout():
    s = [FakeSearch(budget=50.0, depth=8)]
    with pytest.raises(KerasmeshError) as e:
        search_verify.pick(s, WinnerOutOfTime(s, timeout=30))
    assert e.value.kind == "timeout"
    assert "in 30 s" in str(e.value) and "0.4" not in str(e.value)


def test_matmuls_saved_over_budget_at_full_depth_are_blended_with_full():
    from kerasmesh.remat.choice import blend

    saved, full = ("save_matmuls", 1), ("full", 1)
    s = [FakeSearch(budget=70.0, depth=10)]
    s[0].ctx.levers = LeverSpace(("save_matmuls", "full"), None, 8,
                                 blocks=10)
    s[0].seen = {((0,), saved): figures(fake_cost(60.0, {"data": 1.0}))}
    # 5 a block between the two: 5 blocks take 90 to 65, 2% under 70 ...
    costs = {((0,), saved): fake_cost(90.0, {"data": 1.0}),
             ((0,), full): fake_cost(40.0, {"data": 1.0}),
             ((0,), (blend(5, 10), 1)): fake_cost(72.0, {"data": 1.0}),
             ((0,), (blend(6, 10), 1)): fake_cost(66.0, {"data": 1.0})}
    verify = FakeVerifier(s, costs)
    winner, runners = search_verify.pick(s, verify)
    # ... but XLA says 72: one more block, from the blend's own figure.
    assert winner == (0, (0,), (blend(6, 10), 1)) and runners == []
    assert [k for k in verify.costs] == [
        (0, (0,), saved), (0, (0,), full), (0, (0,), (blend(5, 10), 1)),
        (0, (0,), (blend(6, 10), 1))]
    # Without "full" among the levers, nothing fits.
    s[0].ctx.levers = LeverSpace(("save_matmuls",), None, 8, blocks=10)
    with pytest.raises(KerasmeshError) as e:
        search_verify.pick(s, FakeVerifier(s, costs))
    assert e.value.kind == "search_no_fit"


def test_a_blend_over_budget_at_full_depth_gets_more_full_blocks():
    from kerasmesh.remat.choice import blend

    four, full = (blend(4, 10), 4), ("full", 4)
    s = [FakeSearch(budget=70.0, depth=10)]
    s[0].ctx.levers = LeverSpace(("save_matmuls", "full"), None, 8,
                                 blocks=10)
    # The search's figures between its choices said 4 blocks fit ...
    s[0].seen = {((0,), four): figures(fake_cost(65.0, {"data": 1.0}))}
    # ... XLA says 74: from 74 over the 6 blocks left to 40, 5.7 a block;
    # 2% under 70 takes one more.
    costs = {((0,), four): fake_cost(74.0, {"data": 1.0}),
             ((0,), full): fake_cost(40.0, {"data": 1.0}),
             ((0,), (blend(5, 10), 4)): fake_cost(69.0, {"data": 1.0})}
    verify = FakeVerifier(s, costs)
    winner, runners = search_verify.pick(s, verify)
    assert winner == (0, (0,), (blend(5, 10), 4)) and runners == []
    assert list(verify.costs) == [(0, (0,), four), (0, (0,), full),
                                  (0, (0,), (blend(5, 10), 4))]


def test_a_blend_with_room_at_full_depth_gets_fewer_full_blocks():
    from kerasmesh.remat.choice import blend

    six, full = (blend(6, 10), 4), ("full", 4)
    s = [FakeSearch(budget=70.0, depth=10)]
    s[0].ctx.levers = LeverSpace(("save_matmuls", "full"), None, 8,
                                 blocks=10)
    s[0].seen = {((0,), six): figures(fake_cost(68.0, {"data": 1.0}))}
    # XLA says 56: along the line from 6 to 10 (4 a block), 3 fewer aim
    # at 68.6; XLA says 3 take 71, over; between 3 and 6 (5 a block), 4.
    costs = {((0,), six): fake_cost(56.0, {"data": 1.0}),
             ((0,), full): fake_cost(40.0, {"data": 1.0}),
             ((0,), (blend(3, 10), 4)): fake_cost(71.0, {"data": 1.0}),
             ((0,), (blend(4, 10), 4)): fake_cost(66.0, {"data": 1.0})}
    verify = FakeVerifier(s, costs)
    winner, runners = search_verify.pick(s, verify)
    assert winner == (0, (0,), (blend(4, 10), 4)) and runners == []
    assert list(verify.costs) == [
        (0, (0,), six), (0, (0,), full), (0, (0,), (blend(3, 10), 4)),
        (0, (0,), (blend(4, 10), 4))]


def test_matmuls_saved_that_fit_are_not_refitted():
    saved = ("save_matmuls", 1)
    s = [FakeSearch(budget=70.0, depth=10)]
    s[0].ctx.levers = LeverSpace(("save_matmuls", "full"), None, 8,
                                 blocks=10)
    s[0].seen = {((0,), saved): figures(fake_cost(60.0, {"data": 1.0}))}
    verify = FakeVerifier(s, {((0,), saved): fake_cost(50.0, {"data": 1.0})})
    winner, _ = search_verify.pick(s, verify)
    assert winner == (0, (0,), saved)
    assert list(verify.costs) == [(0, (0,), saved)]


def test_a_miss_at_full_depth_puts_its_levers_alike_last():
    # The best candidate's full compile misses the budget by 35%; the
    # next one, on the same mesh and levers, would miss it too by that
    # measure and waits; one at other levers is compiled first, and fits.
    s = [FakeSearch(budget=70.0, depth=8)]
    other = ("none", 2)
    s[0].costs = {((0,), BASE): fake_cost(60.0, {"data": 1.0}),
                  ((2,), BASE): fake_cost(62.0, {"data": 2.0}),
                  ((1,), other): fake_cost(60.0, {"model": 5.0})}
    s[0].seen = {k: figures(r) for k, r in s[0].costs.items()}
    full = {((0,), BASE): fake_cost(81.0, {"data": 1.0}),
            ((2,), BASE): fake_cost(83.0, {"data": 2.0}),
            ((1,), other): fake_cost(65.0, {"model": 5.0})}
    verify = FakeVerifier(s, full)
    winner, runners = search_verify.pick(s, verify)
    assert winner == (0, (1,), other) and runners == []
    # Then, as a runner-up, the one that waited (it misses).
    assert verify.compiled == [(0,), (1,), (2,)]


def test_a_miss_at_full_depth_is_verified_again_recomputing_more():
    # The only candidate, "none", fits by the search's figures; XLA says
    # 90 at full depth. The same layout with "save_matmuls" still misses,
    # with "full" it fits, and so does "full" on its first 3 blocks: that
    # blend is the pick, not "nothing fits".
    from kerasmesh.remat.choice import blend

    s = [FakeSearch(budget=70.0, depth=10)]
    s[0].ctx.levers = LeverSpace(("none", "save_matmuls", "full"), None, 8,
                                 blocks=10)
    s[0].seen = {((0,), BASE): figures(fake_cost(60.0, {"data": 1.0}))}
    full = ("full", 1)
    costs = {((0,), BASE): fake_cost(90.0, {"data": 1.0}),
             ((0,), ("save_matmuls", 1)): fake_cost(75.0, {"data": 1.0}),
             ((0,), full): fake_cost(74.0, {"data": 1.0})}
    with pytest.raises(KerasmeshError) as e:
        search_verify.pick(s, FakeVerifier(s, costs))
    assert e.value.kind == "search_no_fit"
    costs[((0,), full)] = fake_cost(50.0, {"data": 1.0})
    costs[((0,), (blend(3, 10), 1))] = fake_cost(68.0, {"data": 1.0})
    verify = FakeVerifier(s, costs)
    winner, runners = search_verify.pick(s, verify)
    assert winner == (0, (0,), (blend(3, 10), 1)) and runners == []
    assert list(verify.costs) == [
        (0, (0,), BASE), (0, (0,), ("save_matmuls", 1)), (0, (0,), full),
        (0, (0,), (blend(3, 10), 1))]


class OutOfTimeAfterFirst(FakeVerifier):
    """XLA compiles the first candidate; the time runs out on the next."""

    def _compile(self, key):
        if self.compiled:
            raise KerasmeshError("timeout", "The time ran out.")
        return super()._compile(key)


def test_out_of_time_after_a_miss_is_not_a_fit():
    # "none" misses at full depth; the time runs out compiling it again
    # with more remat: the search's own figure for "none" no longer counts.
    s = [FakeSearch(budget=70.0, depth=10)]
    s[0].ctx.levers = LeverSpace(("none", "full"), None, 8, blocks=10)
    s[0].seen = {((0,), BASE): figures(fake_cost(60.0, {"data": 1.0}))}
    costs = {((0,), BASE): fake_cost(90.0, {"data": 1.0})}
    with pytest.raises(KerasmeshError) as e:
        search_verify.pick(s, OutOfTimeAfterFirst(s, costs))
    assert e.value.kind == "search_no_fit"
