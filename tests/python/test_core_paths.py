"""Compact path patterns and the regular expressions made from them."""

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from kerasmesh.core.paths import compact_paths, paths_regex


def test_blocks_and_names_fold_into_one_pattern():
    paths = [f"decoder_block_{i}/attention/{k}/kernel"
             for i in range(18) for k in ("key", "value")]
    assert compact_paths(paths) == [
        "decoder_block_{0..17}/attention/{key,value}/kernel"]


def test_gaps_in_block_numbers_are_kept():
    paths = [f"b_{i}/w" for i in (0, 1, 2, 3, 5, 7, 8, 9)]
    assert compact_paths(paths) == ["b_{0..3,5,7..9}/w"]
    assert compact_paths(["b_1/w", "b_2/w"]) == ["b_{1,2}/w"]


def test_patterns_that_are_not_a_full_product_are_split():
    paths = ["l_0/s_0/w", "l_1/s_1/w"]
    patterns = compact_paths(paths)
    assert len(patterns) == 2
    assert set(patterns) == set(paths)


def test_regex_matches_the_paths_and_not_their_neighbours():
    paths = [f"block_{i}/attention/{k}/kernel"
             for i in range(3) for k in ("key", "value")]
    regex = re.compile(paths_regex(paths))
    assert all(regex.fullmatch(p) for p in paths)
    assert not regex.fullmatch("block_0/attention/query/kernel")
    exact = re.compile(paths_regex(paths, all_numbers=False))
    assert not exact.fullmatch("block_3/attention/key/kernel")
    assert exact.fullmatch("block_2/attention/key/kernel")


names = st.sampled_from(["key", "value", "query", "kernel", "bias"])


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 12), names, names), min_size=1,
                max_size=30))
def test_patterns_match_exactly_the_paths(items):
    paths = [f"block_{i}/{a}/{b}" for i, a, b in items]
    for all_numbers in (False,):
        regex = re.compile(paths_regex(paths, all_numbers))
        universe = [f"block_{i}/{a}/{b}" for i in range(13)
                    for a in ("key", "value", "query", "kernel", "bias")
                    for b in ("key", "value", "query", "kernel", "bias")]
        assert {p for p in universe if regex.fullmatch(p)} == set(paths)
