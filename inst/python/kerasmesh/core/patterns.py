"""Rule keys that can't hang: a static check for catastrophic backtracking.

Keras matches every rule key against every variable path with Python's
`re.fullmatch()`, a backtracking engine with no time limit: a key such as
`"(a+)+$"` takes exponential time on a long path that almost matches, and
Python can't interrupt a running match (not from a thread, not from R).
So keys are checked before use, from the parsed pattern, and refused when
they hold one of the shapes that backtrack without bound:

* a repeated group that holds another repeat of variable length:
  `(a+)+`, `(a*)*`, `(.*a){12}`, `([a-z]+/)*`;
* a repeated group with alternatives that can start alike or match
  nothing: `(a|a)*`, `(a|ab)+`, `(a|)*`;
* more than `MAX_UNBOUNDED` unbounded repeats (`*`, `+`, `{n,}`) in one
  key: each one multiplies the work on a failing path
  (`.*a.*a.*a.*a.*b` is already slow on a 200-character path).

Layout keys need none of these: `.*` and plain alternations, as in
`".*attention/(query|key|value)/kernel"`, pass. Possessive repeats and
atomic groups (`a++`, `(?>...)`) never backtrack and pass too.
"""

from __future__ import annotations

import re
from typing import Any

try:  # Python >= 3.11
    from re import _constants as _sre, _parser as _sre_parse
except ImportError:  # pragma: no cover - Python 3.10 and older
    import sre_constants as _sre  # type: ignore[no-redef]
    import sre_parse as _sre_parse  # type: ignore[no-redef]

from .errors import KerasmeshError
from . import kinds
from .text import string

MAX_UNBOUNDED = 4
_REPEATS = (_sre.MAX_REPEAT, _sre.MIN_REPEAT)
_SAFE = tuple(getattr(_sre, name) for name in ("POSSESSIVE_REPEAT",
                                               "ATOMIC_GROUP")
              if hasattr(_sre, name))
_ANY = None  # a first-character set that may hold any character


def unsafe_reason(key: str) -> str | None:
    """Why `key` could backtrack without bound, or None when it can't.

    `key` must compile (see `layout.check_key()`).
    """
    tree = _sre_parse.parse(key)
    state = {"unbounded": 0}
    reason = _walk(tree, False, state)
    if reason is None and state["unbounded"] > MAX_UNBOUNDED:
        reason = (f"it has {state['unbounded']} unbounded repeats (`*`, `+`, "
                  f"`{{n,}}`); at most {MAX_UNBOUNDED} are allowed")
    return reason


def check_safe(key: str) -> str:
    """Raise a `layout_key` error when `key` could backtrack without bound.

    Raises:
        KerasmeshError: kind `layout_key`, naming the key and the reason.
    """
    reason = unsafe_reason(key)
    if reason is not None:
        raise KerasmeshError(
            kinds.LAYOUT_KEY,
            f"Layout key {string(key)} could make matching hang.",
            x=f"Matching it against a long variable path can take "
              f"exponential time: {reason}.",
            i="Write the key without nested or overlapping repeats, "
              "such as \".*dense.*kernel\", or give the full path.")
    return key


def _walk(items: Any, in_repeat: bool, state: dict) -> str | None:
    """The first unsafe shape in a parsed pattern, or None."""
    for op, av in items:
        reason = None
        if op in _REPEATS:
            low, high, body = av
            if high == _sre.MAXREPEAT:
                state["unbounded"] += 1
            if in_repeat and low != high:
                return "a repeat inside a repeated group, as in (a+)+"
            reason = _walk(body, in_repeat or high > 1, state)
        elif op in _SAFE:
            continue
        elif op is _sre.SUBPATTERN:
            reason = _walk(av[-1], in_repeat, state)
        elif op is _sre.BRANCH:
            alternatives = av[1]
            if in_repeat and _ambiguous(alternatives):
                return ("alternatives that can match alike inside a "
                        "repeated group, as in (a|a)*")
            for alternative in alternatives:
                reason = reason or _walk(alternative, in_repeat, state)
        elif op in (_sre.ASSERT, _sre.ASSERT_NOT):
            reason = _walk(av[1], in_repeat, state)
        elif op is _sre.GROUPREF_EXISTS:
            reason = _walk(av[1], in_repeat, state) or \
                (_walk(av[2], in_repeat, state) if av[2] else None)
        if reason is not None:
            return reason
    return None


def _ambiguous(alternatives: list) -> bool:
    """Whether two alternatives can start alike, or one can match nothing."""
    seen: set[int] = set()
    for alternative in alternatives:
        if alternative.getwidth()[0] == 0:
            return True
        first = _first_chars(alternative)
        if first is _ANY or first & seen:
            return True
        seen |= first
    return False


def _first_chars(items: Any) -> set[int] | None:
    """The characters a pattern can start with; `_ANY` when unsure."""
    for op, av in items:
        if op is _sre.AT:
            continue  # zero-width anchors
        if op is _sre.LITERAL:
            return {av}
        if op is _sre.IN:
            return _class_chars(av)
        if op is _sre.SUBPATTERN:
            return _first_chars(av[-1])
        if op in _REPEATS and av[0] > 0:
            return _first_chars(av[2])
        if op is _sre.BRANCH:
            out: set[int] = set()
            for alternative in av[1]:
                first = _first_chars(alternative)
                if first is _ANY:
                    return _ANY
                out |= first
            return out
        return _ANY
    return _ANY


def _class_chars(items: Any) -> set[int] | None:
    """The characters of a class such as `[a-z_]`; `_ANY` when unsure."""
    out: set[int] = set()
    for op, av in items:
        if op is _sre.LITERAL:
            out.add(av)
        elif op is _sre.RANGE and av[1] - av[0] < 256:
            out.update(range(av[0], av[1] + 1))
        else:
            return _ANY
    return out


def compile_safe(key: str) -> re.Pattern:
    """`re.compile(key)` after `check_safe()`."""
    pattern = re.compile(key)
    check_safe(key)
    return pattern
