"""Resolving variable paths to layout rules as Keras does, with every rule
tested in one match."""

import pytest

from kerasmesh.core.errors import KerasmeshError
from kerasmesh.core.resolve import RuleResolver


def test_an_exact_key_wins_over_patterns():
    resolver = RuleResolver([".*kernel", "dense/kernel"])
    assert resolver.resolve("dense/kernel") == (1, [])


def test_one_matching_pattern_is_the_rule_and_none_is_no_rule():
    resolver = RuleResolver([".*kernel", ".*bias"])
    assert resolver.resolve("dense/bias") == (1, [])
    assert resolver.resolve("dense/gamma") == (None, [])


def test_patterns_match_the_whole_path():
    resolver = RuleResolver(["dense"])
    assert resolver.resolve("dense/kernel") == (None, [])
    assert resolver.matching("dense") == [0]


def test_patterns_that_cannot_be_joined_still_resolve():
    # A flag inside the key keeps it out of the joined pattern.
    resolver = RuleResolver(["(?i)DENSE/.*", ".*bias"])
    assert resolver.resolve("dense/kernel") == (0, [])
    assert resolver.resolve("dense/bias") == (None, [0, 1])


def test_resolver_lists_conflicting_rules():
    resolver = RuleResolver([".*kernel", "dense.*", "x"])
    out = [resolver.resolve(p) for p in ["dense/kernel", "x", "y"]]
    assert out == [(None, [0, 1]), (2, []), (None, [])]


def test_resolver_refuses_catastrophic_keys():
    with pytest.raises(KerasmeshError) as e:
        RuleResolver([".*kernel", "(a|a)*b"])
    assert e.value.kind == "layout_key" and "(a|a)*b" in e.value.message
