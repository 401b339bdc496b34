"""Counts, lists and shapes worded in English, in one place: "1 entry",
"2 entries"; '"a", "b" and 2 more'; "2×4"."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

MAX_NAMED = 3
TIMES = "\u00d7"


def noun(n: int, word: str) -> str:
    """`word` for a count of `n`: "device" for 1, "devices" otherwise
    ("entry" / "entries")."""
    if n == 1:
        return word
    if word.endswith("y") and word[-2:-1] not in ("a", "e", "o", "u"):
        return f"{word[:-1]}ies"
    if word.endswith(("s", "x", "ch", "sh")):
        return f"{word}es"
    return f"{word}s"


def plural(n: int, word: str) -> str:
    """"1 entry", "2 entries", "3 variables"."""
    return f"{n} {noun(n, word)}"


def string(x: Any) -> str:
    """A string in double quotes as R prints it: `"` and `\\` escaped,
    so that a key such as `a"b` reads as the R string it is."""
    return json.dumps(str(x), ensure_ascii=False)


def listing(items: Sequence[Any], more: int = 0, quote: bool = True) -> str:
    """ '"a", "b" and "c"', with "and N more" past MAX_NAMED; without
    `quote`, "8, 9 and 10"."""
    quoted = [string(i) if quote else str(i) for i in items[:MAX_NAMED]]
    extra = len(items) - len(quoted) + more
    if extra > 0:
        quoted.append(f"{extra} more")
    if len(quoted) == 1:
        return quoted[0]
    return ", ".join(quoted[:-1]) + " and " + quoted[-1]


def format_shape(shape: Sequence[Any]) -> str:
    """Shape as "2×4"; unknown sizes as "?"."""
    return TIMES.join("?" if s is None else str(s) for s in shape)


def bytes_text(n: float) -> str:
    """A byte count as R's print-outs write it: "512 B", "4.41 kB",
    "80 GB" (powers of 1000, three significant digits)."""
    units = ["B", "kB", "MB", "GB", "TB", "PB"]
    power = 0
    while power < len(units) - 1 and \
            float(f"{n / 1000 ** power:.3g}") >= 1000:
        power += 1
    return f"{float(f'{n / 1000 ** power:.3g}'):g} {units[power]}"


def r_axes(axes: Sequence[Any]) -> str:
    """A placement as R code: `c(NA, "model")`."""
    return "c(" + ", ".join("NA" if a is None else f'"{a}"'
                            for a in axes) + ")"
