"""A winner's remat refitted to XLA's memory at full depth, along a blend
of "save_matmuls" and "none" (test_search_verify.py has "full" and
"save_matmuls")."""

from kerasmesh.remat.choice import blend
from kerasmesh.search import verify as search_verify
from kerasmesh.search.figures import figures
from kerasmesh.search.levers import LeverSpace
from test_search_verify import FakeSearch, FakeVerifier, fake_cost


def mixed(n, k=1):
    return (blend(n, 10, "save_matmuls", "none"), k)


def searched(memory):
    """A search over 10 blocks, every remat allowed, under 70, that saw
    `memory` ({levers: memory})."""
    s = [FakeSearch(budget=70.0, depth=10)]
    s[0].ctx.levers = LeverSpace(("none", "save_matmuls", "full"), None, 8,
                                 blocks=10)
    s[0].seen = {((0,), lv): figures(fake_cost(m, {"data": 1.0}))
                 for lv, m in memory.items()}
    return s


def test_a_blend_of_matmuls_saved_and_none_over_budget_saves_more():
    saved = ("save_matmuls", 8)
    s = searched({mixed(4, 8): 66.0})
    # XLA says 75: from 75 over the 6 blocks left to 45, 5 a block; 2%
    # under 70 takes 2 more on "save_matmuls".
    costs = {((0,), mixed(4, 8)): fake_cost(75.0, {"data": 1.0}),
             ((0,), saved): fake_cost(45.0, {"data": 1.0}),
             ((0,), mixed(6, 8)): fake_cost(66.0, {"data": 1.0})}
    verify = FakeVerifier(s, costs)
    winner, runners = search_verify.pick(s, verify)
    assert winner == (0, (0,), mixed(6, 8)) and runners == []
    assert list(verify.costs) == [(0, (0,), mixed(4, 8)), (0, (0,), saved),
                                  (0, (0,), mixed(6, 8))]


def test_matmuls_saved_with_room_keep_none_on_their_last_blocks():
    saved, none = ("save_matmuls", 1), ("none", 1)
    s = searched({saved: 60.0})
    # XLA says 50, and "none" on every block 100: 5 a block, so 7 blocks
    # saving their matmuls and 3 keeping everything aim 2% under 70.
    costs = {((0,), saved): fake_cost(50.0, {"data": 1.0}),
             ((0,), none): fake_cost(100.0, {"data": 1.0}),
             ((0,), mixed(7)): fake_cost(66.0, {"data": 1.0})}
    verify = FakeVerifier(s, costs)
    winner, runners = search_verify.pick(s, verify)
    assert winner == (0, (0,), mixed(7)) and runners == []
    assert list(verify.costs) == [(0, (0,), saved), (0, (0,), none),
                                  (0, (0,), mixed(7))]


def test_room_is_aimed_from_the_searchs_own_figures_for_none():
    saved = ("save_matmuls", 1)
    # The search saw "none" 50 above "save_matmuls"; XLA says 50 for
    # "save_matmuls", so "none" on every block is taken as 100 (not
    # compiled), and 7 blocks saving their matmuls aim 2% under 70.
    s = searched({saved: 60.0, ("none", 1): 110.0})
    costs = {((0,), saved): fake_cost(50.0, {"data": 1.0}),
             ((0,), mixed(7)): fake_cost(66.0, {"data": 1.0}),
             ((0,), ("none", 1)): fake_cost(100.0, {"data": 1.0})}
    verify = FakeVerifier(s, costs)
    winner, _ = search_verify.pick(s, verify)
    assert winner == (0, (0,), mixed(7))
    # "none" is compiled only after, as a runner-up.
    assert list(verify.costs)[:2] == [(0, (0,), saved), (0, (0,), mixed(7))]


def test_no_room_or_none_not_allowed_leaves_matmuls_saved():
    saved = ("save_matmuls", 1)
    # XLA's 50 and the search's 12 more for "none" put "none" on every
    # block under 70: no blend to aim along.
    none = ("none", 1)
    costs = {((0,), saved): fake_cost(50.0, {"data": 1.0}),
             ((0,), none): fake_cost(100.0, {"data": 1.0})}
    s = searched({saved: 60.0, none: 72.0})
    verify = FakeVerifier(s, costs)
    assert search_verify.pick(s, verify)[0] == (0, (0,), saved)
    assert list(verify.costs)[0] == (0, (0,), saved)
    assert all(not isinstance(k[2][0], tuple) for k in verify.costs)
    s = searched({saved: 60.0, none: 110.0})
    s[0].ctx.levers = LeverSpace(("save_matmuls", "full"), None, 8,
                                 blocks=10)
    verify = FakeVerifier(s, costs)
    assert search_verify.pick(s, verify)[0] == (0, (0,), saved)
    assert all(not isinstance(k[2][0], tuple) for k in verify.costs)
