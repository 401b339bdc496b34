"""The one reader of XLA's HLO text.

`parse()` reads a module as `compiled.as_text()` (or a lowered stage's
`as_text(dialect="hlo")`) prints it, one instruction a line:

    %all-gather-start.4 = (bf16[512,14336]{1,0}, bf16[4096,14336]{1,0})
        all-gather-start(%wrapped_convert.6), channel_id=10,
        replica_groups=mesh['axis_0'=8,'axis_1'=1] {'axis_0'},
        dimensions={0}, metadata={op_name="jit(step)/..."}

into `Computation`s of `Instruction`s, each with its result (an `Array`
or a tuple of them), its opcode, its operands by name and the attributes
the rest of `cost/` reads (the computations it calls, a loop's known trip
count, a custom call's target and configuration, its `op_name`). An
instruction's operands are looked up in its computation
(`Computation.operand_arrays()`). A compiled module whose text says
`is_scheduled=true` lists each computation's instructions in the order
they run.

What is read from a module lives beside it: its collectives
(`collectives.py`) and their device groups (`replica_groups.py`), its
operations' FLOPs and bytes (`operations.py`) and the schedule's time
(`schedule.py`).
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field

_HEADER = re.compile(r"^(?P<entry>ENTRY\s+)?%?(?P<name>[\w.\-]+)\s*[ (].*\{\s*$")
_MODULE = re.compile(r"^HloModule\s+(?P<name>[\w.\-]+)(?P<rest>.*)$")
_NAMED = re.compile(r"^\s*(?P<root>ROOT\s+)?%?(?P<name>[\w.\-]+)\s*=\s*")
_OPCODE = re.compile(r"\s*(?P<opcode>[\w\-]+)\(")
_ARRAY = re.compile(r"\b(?P<dtype>[a-z]+[0-9]*(?:e[0-9]m[0-9][a-z0-9]*)?)"
                    r"\[(?P<dims>[0-9,]*)\]")
_CALLED = re.compile(r"\b(?:calls|to_apply|body|condition)=%?(?P<name>[\w.\-]+)")
_CALLED_SET = re.compile(r"\b(?:branch_computations|called_computations)="
                         r"\{(?P<names>[^}]*)\}")
_KNOWN_TRIPS = re.compile(r'"known_trip_count":\{"n":"(?P<n>\d+)"\}')
_TARGET = re.compile(r'custom_call_target="(?P<target>[^"]*)"')
_OP_NAME = re.compile(r'metadata=\{[^}]*?\bop_name="(?P<name>(?:[^"\\]|\\.)*)"')
_CONSTANT = re.compile(r"^\s*(?P<value>-?\d+)\s*$")

_BYTES = {"pred": 1, "s4": 1, "u4": 1, "s8": 1, "u8": 1, "s16": 2,
          "u16": 2, "f16": 2, "bf16": 2, "s32": 4, "u32": 4, "f32": 4,
          "s64": 8, "u64": 8, "f64": 8, "c64": 8, "c128": 16}


def element_bytes(dims: Sequence[int], dtype: str) -> float:
    """Bytes of one array of shape `dims` and HLO type `dtype`."""
    size = _BYTES.get(dtype)
    if size is None:
        bits = re.search(r"([0-9]+)", dtype)
        size = max(1, int(bits.group(1)) // 8) if bits else 4
    return float(math.prod(dims) * size)


@dataclass(frozen=True)
class Array:
    """One array of a result: its HLO element type and dimensions."""

    dtype: str
    dims: tuple[int, ...]

    @property
    def elements(self) -> int:
        return math.prod(self.dims)

    @property
    def bytes(self) -> float:
        return element_bytes(self.dims, self.dtype)


# A result: one Array, or a tuple of results.
Result = Array | tuple


def flatten(result: Result) -> list[Array]:
    """The arrays of a result, in order."""
    if isinstance(result, Array):
        return [result]
    return [a for part in result for a in flatten(part)]


def result_bytes(result: Result) -> float:
    return float(sum(a.bytes for a in flatten(result)))


@dataclass(frozen=True)
class Instruction:
    """One HLO instruction.

    Attributes:
        name: its name, without "%".
        opcode: such as "fusion", "dot", "all-gather-start".
        result: its result (`Array` or a tuple).
        operands: the names of its operands, in order.
        attrs: the text after its operands (attributes, metadata).
        root: whether it is its computation's ROOT.
    """

    name: str
    opcode: str
    result: Result
    operands: tuple[str, ...]
    attrs: str
    root: bool = False

    @property
    def arrays(self) -> list[Array]:
        return flatten(self.result)

    @property
    def called(self) -> list[str]:
        """The computations it calls (`calls=`, `to_apply=`, a loop's
        `body=` and `condition=`, a conditional's branches)."""
        names = [m.group("name") for m in _CALLED.finditer(self.attrs)]
        for m in _CALLED_SET.finditer(self.attrs):
            names += [n.strip().lstrip("%")
                      for n in m.group("names").split(",") if n.strip()]
        return names

    def attr(self, key: str) -> str | None:
        """The computation named by `key=` (such as "body"), or None."""
        m = re.search(rf"\b{key}=%?([\w.\-]+)", self.attrs)
        return m.group(1) if m else None

    @property
    def known_trips(self) -> int | None:
        m = _KNOWN_TRIPS.search(self.attrs)
        return int(m.group("n")) if m else None

    @property
    def target(self) -> str:
        """A custom call's target ("" for other instructions)."""
        m = _TARGET.search(self.attrs)
        return m.group("target") if m else ""

    @property
    def op_name(self) -> str:
        """JAX's name stack of the operation (`metadata`'s op_name)."""
        m = _OP_NAME.search(self.attrs)
        return m.group("name") if m else ""


@dataclass
class Computation:
    """A computation: its instructions in the order printed (the schedule,
    in a scheduled module), and each by name."""

    name: str
    instructions: list[Instruction] = field(default_factory=list)
    by_name: dict[str, Instruction] = field(default_factory=dict)
    entry: bool = False

    def add(self, instruction: Instruction) -> None:
        self.instructions.append(instruction)
        self.by_name[instruction.name] = instruction

    def operand_arrays(self, instruction: Instruction) -> list[list[Array]]:
        """The arrays of each operand (empty where it is not known)."""
        out = []
        for name in instruction.operands:
            op = self.by_name.get(name)
            out.append(op.arrays if op is not None else [])
        return out

    @property
    def root(self) -> Instruction | None:
        for i in reversed(self.instructions):
            if i.root:
                return i
        return self.instructions[-1] if self.instructions else None


@dataclass
class Module:
    """A parsed HLO module: its computations by name, which is the entry,
    and whether its instructions are in the order they run."""

    computations: dict[str, Computation]
    entry: str
    scheduled: bool = False
    # Integer constants by (computation, instruction name): loop limits.
    constants: dict[tuple[str, str], int] = field(default_factory=dict)

    @property
    def entry_computation(self) -> Computation:
        return self.computations[self.entry]

    def instructions(self) -> Iterator[tuple[Computation, Instruction]]:
        for c in self.computations.values():
            for i in c.instructions:
                yield c, i


def _closing(text: str, start: int, opening: str = "(",
             closing: str = ")") -> int:
    """The index of the bracket closing the one at `start`."""
    depth = 0
    for k in range(start, len(text)):
        ch = text[k]
        if ch == opening:
            depth += 1
        elif ch == closing:
            depth -= 1
            if depth == 0:
                return k
    return len(text) - 1


def parse_result(text: str) -> Result:
    """A result type: `f32[2,3]{1,0}`, or a tuple `(a, (b, c))`."""
    text = re.sub(r"/\*.*?\*/", "", text).strip()
    if not text.startswith("("):
        m = _ARRAY.search(text)
        if m is None:
            return ()
        return Array(m.group("dtype"), tuple(
            int(d) for d in m.group("dims").split(",") if d))
    inner = text[1:_closing(text, 0)]
    return tuple(parse_result(part) for part in _split_types(inner)
                 if part.strip())


def _split_types(text: str) -> list[str]:
    """A tuple's element types, split at top-level commas (not inside
    parentheses, layouts `{...}` or dimensions `[...]`)."""
    parts, depth, start = [], 0, 0
    for k, ch in enumerate(text):
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        elif ch == "," and depth == 0:
            parts.append(text[start:k])
            start = k + 1
    return parts + [text[start:]]


def _operand_names(text: str) -> tuple[str, ...]:
    """Operand names, with or without "%" and a type before them
    (compiled text writes `%a`, lowered text `a`, older text `f32[2] %a`)."""
    names = []
    for part in _split_types(text):
        words = part.split()
        if words:
            names.append(words[-1].lstrip("%"))
    return tuple(names)


@dataclass(frozen=True)
class _Parsed:
    instruction: Instruction
    operands_text: str


def parse_instruction(line: str) -> _Parsed | None:
    """One instruction line, or None for anything else."""
    m = _NAMED.match(line)
    if m is None:
        return None
    rest = line[m.end():]
    if rest.startswith("("):
        end = _closing(rest, 0) + 1
    else:
        space = rest.find(" ")
        end = len(rest) if space < 0 else space
    result_text, after = rest[:end], rest[end:]
    op = _OPCODE.match(after)
    if op is None:
        return None
    open_at = op.end() - 1
    close_at = _closing(after, open_at)
    operands_text = after[open_at + 1:close_at]
    instruction = Instruction(
        name=m.group("name"), opcode=op.group("opcode"),
        result=parse_result(result_text),
        operands=_operand_names(operands_text),
        attrs=after[close_at + 1:], root=bool(m.group("root")))
    return _Parsed(instruction, operands_text)


def parse(text: str) -> Module:
    """A module's computations and instructions.

    Text that is one or more instruction lines without a computation
    around them (a test's, an excerpt) is read as one entry computation.
    """
    computations: dict[str, Computation] = {}
    constants: dict[tuple[str, str], int] = {}
    entry, scheduled, current = None, False, None
    for line in text.splitlines():
        if not line.strip():
            continue
        if not line[:1].isspace():
            module = _MODULE.match(line)
            if module:
                scheduled = "is_scheduled=true" in module.group("rest")
                continue
            header = _HEADER.match(line)
            if header:
                current = Computation(header.group("name"),
                                      entry=bool(header.group("entry")))
                computations[current.name] = current
                if current.entry:
                    entry = current.name
                continue
            if line.startswith("}"):
                continue
        parsed = parse_instruction(line)
        if parsed is None:
            continue
        if current is None:
            current = computations.setdefault("main", Computation(
                "main", entry=True))
            entry = entry or "main"
        i = parsed.instruction
        current.add(i)
        if i.opcode == "constant":
            value = _CONSTANT.match(parsed.operands_text)
            if value:
                constants[(current.name, i.name)] = int(value.group("value"))
    if entry is None:
        entry = next(iter(computations), "main")
        computations.setdefault(entry, Computation(entry, entry=True))
    return Module(computations, entry, scheduled, constants)


def loop_trips(module: Module, loop: Instruction) -> int:
    """How many times a `while` runs its body: XLA's `known_trip_count`
    (compiled text) or, in lowered text, the constant its condition
    compares the counter with (`counter < n`, counting from 0 as
    `lax.map` and `lax.scan` do); 1 when neither says."""
    known = loop.known_trips
    if known is not None:
        return max(known, 1)
    condition = module.computations.get(loop.attr("condition") or "")
    if condition is None:
        return 1
    for i in condition.instructions:
        if i.opcode == "compare" and "direction=LT" in i.attrs and \
                len(i.operands) == 2:
            value = module.constants.get((condition.name, i.operands[1]))
            if value is not None:
                return max(value, 1)
    return 1


# --------------------------------------------------------------------------
# Names


def split_top(text: str, sep: str) -> list[str]:
    """`text` split at each `sep` outside parentheses."""
    parts, depth, start = [], 0, 0
    for i, ch in enumerate(text):
        depth += (ch == "(") - (ch == ")")
        if ch == sep and depth == 0:
            parts.append(text[start:i])
            start = i + 1
    return parts + [text[start:]]


def op_names(attrs: str, n: int) -> list[str]:
    """The name stack of each of an instruction's `n` result arrays.

    XLA's metadata gives one `op_name` per instruction; an instruction that
    XLA combined from several writes theirs as `prefix/(a:b:...)`, one
    name per operand in order. When the names are as many as the arrays,
    each array gets `prefix/` and its own; when they are not, none (which
    is whose is unknown). One name: every array gets it. No metadata:
    empty names.
    """
    m = _OP_NAME.search(attrs)
    name = m.group("name") if m else ""
    *outer, last = split_top(name, "/")
    if last.startswith("(") and last.endswith(")"):
        parts = split_top(last[1:-1], ":")
        if len(parts) == n:
            return ["/".join(outer + [p]) for p in parts]
        if len(parts) > 1:
            return [""] * n
    return [name] * n
