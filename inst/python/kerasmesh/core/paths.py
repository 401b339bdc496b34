"""Compact listings of many variable paths.

A transformer has hundreds of variables whose paths differ only in a block
number or one name: `decoder_block_0/attention/key/kernel`, ...,
`decoder_block_17/attention/value/kernel`. `compact_paths()` writes such a
set as patterns, `decoder_block_{0..17}/attention/{key,value}/kernel`, and
`pattern_regex()` turns a pattern back into a layout-map key that matches
exactly those paths (numbers as `\\d+` where every number is there).
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence

_NUMBER = re.compile(r"\d+")
# `{0..17}` or `{0..3,5}` (numbers) and `{key,value}` (names) in a pattern.
_SLOT = re.compile(r"\{([^{}]*)\}")


def _ranges(numbers: Sequence[int]) -> str:
    """`0..17` or `0..3,5,7..9`: sorted numbers as ranges."""
    numbers = sorted(set(numbers))
    parts, start = [], numbers[0]
    for prev, n in zip(numbers, numbers[1:] + [None]):
        if n is not None and n == prev + 1:
            continue
        parts.append(str(start) if start == prev else
                     f"{start}..{prev}" if prev > start + 1 else
                     f"{start},{prev}")
        start = n
    return ",".join(parts)


def _collapse_numbers(template: str, numbers: list[tuple[int, ...]]
                      ) -> list[str]:
    """Patterns for the paths sharing `template` (numbers as `#`)."""
    if len(numbers) == 1:
        return [_fill(template, [str(n) for n in numbers[0]])]
    width = len(numbers[0])
    values = [sorted({t[i] for t in numbers}) for i in range(width)]
    if math.prod(len(v) for v in values) == len(set(numbers)):
        slots = [str(v[0]) if len(v) == 1 else "{" + _ranges(v) + "}"
                 for v in values]
        return [_fill(template, slots)]
    # Not a full product: split on the first number that varies.
    first = next(i for i, v in enumerate(values) if len(v) > 1)
    out: list[str] = []
    for value in values[first]:
        out += _collapse_numbers(template,
                                 [t for t in numbers if t[first] == value])
    return out


def _fill(template: str, slots: list[str]) -> str:
    it = iter(slots)
    return re.sub("#", lambda m: next(it), template)


def _merge_names(patterns: list[str]) -> list[str]:
    """Merge patterns that differ in one `/` segment: `{key,value}`."""
    changed = True
    while changed and len(patterns) > 1:
        changed = False
        depth = max(p.count("/") for p in patterns) + 1
        for i in range(depth):
            groups: dict[tuple, list[str]] = {}
            for p in patterns:
                parts = p.split("/")
                if len(parts) <= i:
                    groups.setdefault((p,), []).append(p)
                    continue
                key = (len(parts), i, tuple(parts[:i] + parts[i + 1:]))
                groups.setdefault(key, []).append(p)
            merged = []
            for key, members in groups.items():
                if len(members) == 1 or len(key) == 1:
                    merged += members
                    continue
                parts = members[0].split("/")
                names = [m.split("/")[i] for m in members]
                if any("{" in n for n in names):
                    merged += members
                    continue
                parts[i] = "{" + ",".join(names) + "}"
                merged.append("/".join(parts))
                changed = True
            patterns = merged
    return patterns


def compact_paths(paths: Sequence[str]) -> list[str]:
    """Patterns that list `paths` compactly, in order of first appearance.

    Numbers that vary become ranges (`block_{0..79}`), then patterns that
    differ in one path segment are merged (`{key,value}`).
    """
    groups: dict[str, list[tuple[int, ...]]] = {}
    for p in dict.fromkeys(paths):
        template = _NUMBER.sub("#", p)
        groups.setdefault(template, []).append(
            tuple(int(n) for n in _NUMBER.findall(p)))
    patterns: list[str] = []
    for template, numbers in groups.items():
        patterns += _collapse_numbers(template, numbers)
    return _merge_names(patterns)


def pattern_regex(pattern: str, all_numbers: bool = True) -> str:
    """A regular expression for a `compact_paths()` pattern.

    Args:
        pattern: a pattern such as `block_{0..17}/attention/{key,value}/k`.
        all_numbers: write number ranges as `\\d+` (when the range covers
            every number there is); otherwise as alternations.
    """
    out, pos = [], 0
    for m in _SLOT.finditer(pattern):
        out.append(re.escape(pattern[pos:m.start()]))
        items = m.group(1).split(",")
        if all(re.fullmatch(r"\d+(\.\.\d+)?", i) for i in items):
            if all_numbers:
                out.append(r"\d+")
            else:
                numbers = []
                for i in items:
                    lo, _, hi = i.partition("..")
                    numbers += range(int(lo), int(hi or lo) + 1)
                out.append("(?:" + "|".join(map(str, numbers)) + ")")
        else:
            out.append("(?:" + "|".join(re.escape(i) for i in items) + ")")
        pos = m.end()
    out.append(re.escape(pattern[pos:]))
    return "".join(out).replace("\\/", "/").replace("\\_", "_")


def paths_regex(paths: Sequence[str], all_numbers: bool = True) -> str:
    """One regular expression matching `paths` (and their siblings)."""
    patterns = compact_paths(paths)
    parts = [pattern_regex(p, all_numbers) for p in patterns]
    return parts[0] if len(parts) == 1 else "(?:" + "|".join(parts) + ")"
