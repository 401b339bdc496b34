"""Rule lookup: which of a layout map's rules decides a variable path.

The one place kerasmesh looks rules up (`Placer` for the planner, the
cost, the guard and the search; `lm[[path]]` through `layout_map/`), with
one wording of the error for a path that several rules match
(`ambiguous_rule()`).

Keras's `LayoutMap.__getitem__` looks a path up as an exact key first, then
calls `re.fullmatch(key, path)` for every key, and fails when more than one
key matches. Doing that for every variable of a large model against every
rule costs one Python call per (path, rule) pair. `RuleResolver` gives the
same answers with each rule compiled once and the rules joined into one
pattern, so a path costs one regular-expression call in C.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from .paths import paths_regex
from .patterns import compile_safe
from .text import listing, string

_PLAIN_FLAGS = re.compile("").flags


def rule_keys(layout_map: Any) -> list[str]:
    """The keys of a LayoutMap.

    Not `key in layout_map`: Mapping's `__contains__` calls `__getitem__`,
    which in LayoutMap returns None instead of raising, so it is always true.
    """
    return list(iter(layout_map))


def ambiguous_rule(path: str, keys: Sequence[str], what: str = "variable"
                   ) -> tuple[str, list[tuple[str, str]]]:
    """The message and bullets for a path that several rules match, as
    Keras refuses it: one wording for every place that looks rules up.

    Args:
        path: the path looked up.
        keys: the keys that match it.
        what: what the path names ("variable", "path", ...).
    """
    return (
        f'{what[0].upper()}{what[1:]} {string(path)} must match at most one '
        "layout rule.",
        [("x", f"It matches rules {listing(list(keys))}; Keras fails when "
               "it creates the variable."),
         ("i", "Make the keys more specific, or add the exact path as "
               "a key (an exact key wins over patterns).")])


def _combinable(pattern: re.Pattern) -> bool:
    """Whether a rule can be joined into an alternation unchanged.

    Rules with capturing groups (group numbers and backreferences would
    shift) or global inline flags such as `(?i)` (only valid at the start of
    a pattern) are matched one by one instead.
    """
    return pattern.groups == 0 and pattern.flags == _PLAIN_FLAGS


class RuleResolver:
    """Rules compiled once; resolves paths exactly as Keras does.

    The joinable rules become one pattern of optional lookaheads,
    `(?:(?=(?:rule)\\Z)())?` per rule, so a single `match()` call tests
    every rule against a path and its groups say which rules matched: no
    Python loop over rules, and no early stop that would hide a second match.

    Args:
        keys: the layout map's keys, in insertion order.

    Raises:
        re.error: when a key does not compile.
        KerasmeshError: kind `layout_key` for a key that could backtrack
            without bound (see `patterns.py`).
    """

    def __init__(self, keys: Sequence[str]):
        self.keys = list(keys)
        self.exact = {k: i for i, k in enumerate(self.keys)}
        self.patterns = [compile_safe(k) for k in self.keys]
        self.joined = [i for i, p in enumerate(self.patterns)
                       if _combinable(p)]
        self.single = [i for i, p in enumerate(self.patterns)
                       if not _combinable(p)]
        self._all = None
        if self.joined:
            self._all = re.compile("".join(
                f"(?:(?=(?:{self.keys[i]})\\Z)())?" for i in self.joined))

    def matching(self, path: str) -> list[int]:
        """Indices of every rule whose key fully matches `path`."""
        return [i for i, p in enumerate(self.patterns) if p.fullmatch(path)]

    def resolve(self, path: str) -> tuple[int | None, list[int]]:
        """The rule Keras would use for `path`, and the rules in conflict.

        Returns:
            `(index, [])` for the rule Keras uses (an exact key wins over
            patterns), `(None, [])` when no rule matches, and
            `(None, indices)` when several keys match and Keras would raise.
        """
        if path in self.exact:
            return self.exact[path], []
        first = None
        found = 0
        if self._all is not None:
            groups = self._all.match(path).groups()
            found = len(groups) - groups.count(None)
            if found:
                first = self.joined[groups.index("")]
        for i in self.single:
            if found > 1:
                break
            if self.patterns[i].fullmatch(path):
                first = i if first is None else first
                found += 1
        if found == 0:
            return None, []
        if found == 1:
            return first, []
        return None, self.matching(path)

    def lookup(self, path: str) -> tuple[str | None, list[str]]:
        """`resolve()` by key: `(key, [])`, `(None, [])` when no rule
        matches, `(None, keys)` when several do."""
        index, clash = self.resolve(path)
        return (None if index is None else self.keys[index],
                [self.keys[i] for i in clash])


def exact_key(paths: list[str], every_path: list[str]) -> str:
    """One key that matches exactly `paths` among `every_path`: numbers
    as `\\d+` where that matches no other path, else the numbers spelt
    out, else the paths themselves. Classes that differ only in shape
    share a template (`dense_0`, `dense_2` beside `dense_1`, `dense_3`),
    so the compact key alone could give two classes one key."""
    for key in (paths_regex(paths), paths_regex(paths, False)):
        resolver = RuleResolver([key])
        hits = {p for p in every_path if resolver.resolve(p)[0] is not None}
        if hits == set(paths):
            return key
    return "(?:" + "|".join(re.escape(p) for p in paths) + ")"
