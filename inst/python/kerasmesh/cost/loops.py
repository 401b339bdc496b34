"""The operations XLA's cost analysis leaves out of loops.

XLA counts a while loop's body once, whatever its trip count. A step
has loops where attention is computed in blocks (`attention.py`: one
trip per block of queries, forward and backward), so its count would
miss all blocks but one. `uncounted_flops()` reads the HLO text (a
compiled step's, or a lowered one's as HLO) and returns the FLOPs of
every other trip, counted as XLA's cost analysis counts them: 2 x the
result's elements x the contracted size for a matrix product, one per
result element for arithmetic, comparisons, selects and conversions,
one per element reduced away for a reduction (transcendental functions
are XLA's other count). On a small Llama step without loops this gives
XLA's own count within 0.01%.

A loop's trip count is XLA's `known_trip_count` (compiled text) or, in
lowered text, the constant its condition compares the counter with
(`counter < n`, the counter starting at 0 as `lax.map` and `lax.scan`
do); a loop whose count neither says is taken as one trip.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field

_HEADER = re.compile(r"^(?:ENTRY\s+)?%?(?P<name>[\w.\-]+)\b.*\{\s*$")
_ENTRY = re.compile(r"^ENTRY\s+%?(?P<name>[\w.\-]+)", re.M)
_ARRAY = r"[a-z][a-z0-9]*\[[0-9,]*\]"
_INSTRUCTION = re.compile(
    r"^\s*(?:ROOT\s+)?%?(?P<name>[\w.\-]+)\s*=\s*(?P<shape>" + _ARRAY +
    r")\S*\s+(?P<opcode>[\w\-]+)\((?P<operands>[^)]*)\)(?P<rest>.*)$")
_WHILE = re.compile(r"\swhile\(.*\bcondition=%?(?P<condition>[\w.\-]+)"
                    r".*\bbody=%?(?P<body>[\w.\-]+)")
_KNOWN_TRIPS = re.compile(r'"known_trip_count":\{"n":"(?P<n>\d+)"\}')
_CONTRACTING = re.compile(r"lhs_contracting_dims=\{(?P<dims>[0-9,]*)\}")
_CALLED = re.compile(r"\b(?:calls|to_apply)=%?(?P<name>[\w.\-]+)")
_CONSTANT = re.compile(r"constant\((?P<value>-?\d+)\)")
_ELEMENTWISE = frozenset((
    "add", "subtract", "multiply", "divide", "maximum", "minimum", "negate",
    "abs", "compare", "select", "and", "or", "not", "xor", "clamp", "sign",
    "floor", "ceil", "round-nearest-even", "remainder", "convert"))
_LESS_THAN = re.compile(r"compare\(%?(?P<a>[\w.\-]+),\s*%?(?P<b>[\w.\-]+)\)"
                        r".*direction=LT")


@dataclass
class _Computation:
    shapes: dict[str, list[int]] = field(default_factory=dict)
    constants: dict[str, int] = field(default_factory=dict)
    flops: int = 0  # its own instructions', not those it calls
    called: list[str] = field(default_factory=list)
    loops: list[tuple[str, str, int | None]] = field(default_factory=list)
    limit: int | None = None  # a loop condition's `counter < limit`


def uncounted_flops(text: str) -> float:
    """The FLOPs of every loop trip but the first in HLO `text` (0
    without loops)."""
    if " while(" not in text:
        return 0.0
    computations = _parse(text)
    entry = _ENTRY.search(text)
    if entry is None:
        return 0.0
    name = entry.group("name")
    return float(_flops(computations, name, True, {}) -
                 _flops(computations, name, False, {}))


def _parse(text: str) -> dict[str, _Computation]:
    computations: dict[str, _Computation] = {}
    current = None
    for line in text.splitlines():
        header = None if line[:1].isspace() else _HEADER.match(line)
        if header:
            current = computations.setdefault(header.group("name"),
                                              _Computation())
        elif current is not None:
            _read_instruction(current, line)
    return computations


def _read_instruction(c: _Computation, line: str) -> None:
    loop = _WHILE.search(line)
    if loop:
        trips = _KNOWN_TRIPS.search(line)
        c.loops.append((loop.group("body"), loop.group("condition"),
                        int(trips.group("n")) if trips else None))
        return
    c.called.extend(called.group("name") for called in _CALLED.finditer(line))
    m = _INSTRUCTION.match(line)
    if not m:
        return
    name, opcode, rest = m.group("name"), m.group("opcode"), m.group("rest")
    shape = c.shapes[name] = _dims(m.group("shape"))
    first = c.shapes.get(m.group("operands").split(",")[0].strip().lstrip("%"))
    if opcode in _ELEMENTWISE:
        c.flops += math.prod(shape)
    elif opcode == "reduce" and first is not None:
        c.flops += max(math.prod(first) - math.prod(shape), 0)
    elif opcode == "dot" and first is not None:
        contracting = _CONTRACTING.search(rest)
        dims = [int(d) for d in contracting.group("dims").split(",") if d] \
            if contracting else []
        if all(d < len(first) for d in dims):
            c.flops += 2 * math.prod(shape) * math.prod(first[d] for d in dims)
    if opcode == "constant":
        value = _CONSTANT.search(line)
        if value:
            c.constants[name] = int(value.group("value"))
    elif opcode == "compare":
        less = _LESS_THAN.search(line)
        if less and less.group("b") in c.constants:
            c.limit = c.constants[less.group("b")]


def _dims(shape: str) -> list[int]:
    inside = shape[shape.index("[") + 1:shape.index("]")]
    return [int(d) for d in inside.split(",") if d]


def _flops(computations: dict[str, _Computation], name: str,
           every_trip: bool, memo: dict) -> int:
    """The FLOPs of computation `name` and what it calls, each loop's body
    once or (`every_trip`) once per trip."""
    if (name, every_trip) in memo:
        return memo[(name, every_trip)]
    memo[(name, every_trip)] = 0  # a cycle counts nothing more
    c = computations.get(name)
    if c is None:
        return 0
    total = c.flops + sum(_flops(computations, callee, every_trip, memo)
                          for callee in c.called)
    for body, condition, trips in c.loops:
        if trips is None:
            trips = getattr(computations.get(condition), "limit", None)
        scale = max(trips or 1, 1) if every_trip else 1
        total += scale * _flops(computations, body, every_trip, memo)
    memo[(name, every_trip)] = total
    return total
