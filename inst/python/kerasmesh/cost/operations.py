"""What each operation of a compiled step computes and moves.

`operation()` gives one instruction of a module `hlo.parse()` read its
work: floating-point operations, counted as XLA's cost analysis counts
them (2 x the result's elements x the contracted size for a matrix
product, one per result element for arithmetic, comparisons, selects and
conversions, one per element reduced away for a reduction, one per element a
collective reduces; a fusion the sum of what it fuses), and bytes, the arrays it reads and writes in the
device's memory (its operands' and its result's; nothing for what only
renames memory: parameters, bitcasts, tuples and their elements). Where
XLA's cost analysis counts nothing, this counts from the shapes:

* cuBLAS and oneDNN matrix products (`custom-call`s whose target names a
  GEMM or a matmul): 2 x the product's elements x the contracted size
  its `dot_dimension_numbers` give;
* cuDNN's fused attention (`__cudnn$fmha...`): the two matrix products
  of the scores, 4 x batch x heads x queries x keys x head size, halved
  under a causal mask (the kernel skips the masked blocks), and 2.5
  times that for the backward pass (five products where the forward has
  two: the scores again, and the gradients of the queries, keys, values
  and scores).

Each operation has a kind, what decides its time (`topology/time.py`):
`MATMUL` (a product, or a fusion around one), `ATTENTION` (fused
attention, or attention computed in blocks as `attention.py` traces it
for GPUs, its operations named `attention.SCOPE`), `MEMORY` (the rest),
`NONE` (no work). `step_flops()` totals a module's FLOPs with every loop
trip counted (XLA's cost analysis counts a loop's body once).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

from . import hlo
from .collectives import collective_of
from .hlo import Computation, Instruction, Module
from ..topology.time import ATTENTION, MATMUL, MEMORY, NONE

# The name scope attention traced in blocks runs under (`attention.py`).
SCOPE = "kerasmesh_fused_attention"
# cuDNN's backward pass computes five products where the forward has two.
BACKWARD_FACTOR = 2.5

_ELEMENTWISE = frozenset((
    "add", "subtract", "multiply", "divide", "maximum", "minimum", "negate",
    "abs", "compare", "select", "and", "or", "not", "xor", "clamp", "sign",
    "floor", "ceil", "round-nearest-even", "remainder", "convert"))
# Instructions that move no memory of their own.
_FREE = frozenset((
    "parameter", "constant", "bitcast", "get-tuple-element", "tuple",
    "after-all", "partition-id", "replica-id", "opt-barrier",
    "add-dependency", "domain", "iota", "broadcast"))
_GEMM_TARGET = re.compile(r"gemm|matmul", re.I)
_CONTRACTING = re.compile(r"lhs_contracting_dims=\{(?P<dims>[0-9,]*)\}")
_CONTRACTING_JSON = re.compile(
    r'"lhs_contracting_dimensions":\s*\[(?P<dims>[^\]]*)\]')
_INTERMEDIATE = re.compile(
    r'"intermediate_tensor_shape":\s*\{[^{}]*?"dimensions":\s*'
    r'\[(?P<dims>[^\]]*)\]')


@dataclass(frozen=True)
class Work:
    """One operation's work: `flops`, `bytes` it reads and writes, and
    its `kind` (`MATMUL`, `ATTENTION`, `MEMORY` or `NONE`)."""

    flops: float
    bytes: float
    kind: str


def _dims(text: str) -> list[int]:
    return [int(d.strip().strip('"')) for d in text.split(",") if d.strip()]


def _dot_flops(c: Computation, i: Instruction) -> float:
    lhs = c.operand_arrays(i)
    if not lhs or not lhs[0]:
        return 0.0
    first = lhs[0][0].dims
    m = _CONTRACTING.search(i.attrs) or _CONTRACTING_JSON.search(i.attrs)
    dims = _dims(m.group("dims")) if m else []
    if not all(d < len(first) for d in dims):
        return 0.0
    out = i.arrays[0].elements if i.arrays else 0
    return 2.0 * out * math.prod(first[d] for d in dims)


def _attention_flops(c: Computation, i: Instruction) -> float:
    """Fused attention's products, from the scores' shape (batch, heads,
    queries, keys) and the queries' head size."""
    m = _INTERMEDIATE.search(i.attrs)
    query = c.operand_arrays(i)[0] if i.operands else []
    if m is None or not query:
        return 0.0
    scores = math.prod(_dims(m.group("dims")))
    flops = 4.0 * scores * query[0].dims[-1]
    if '"mask_type": "CAUSAL"' in i.attrs or '"mask_type":"CAUSAL"' in i.attrs:
        flops /= 2
    if "Backward" in i.target:
        flops *= BACKWARD_FACTOR
    return flops


def _own_flops(c: Computation, i: Instruction) -> float:
    """FLOPs of one instruction, not of what it calls."""
    op = i.opcode
    if op in _ELEMENTWISE:
        return float(i.arrays[0].elements) if i.arrays else 0.0
    if op == "reduce":
        operands = c.operand_arrays(i)
        first = operands[0][0].elements if operands and operands[0] else 0
        kept = sum(a.elements for a in i.arrays)
        return float(max(first - kept, 0))
    if op == "dot":
        return _dot_flops(c, i)
    if op in ("all-reduce", "all-reduce-start"):
        return float(sum(a.elements for a in i.arrays))
    if op in ("reduce-scatter", "reduce-scatter-start"):
        return float(sum(a.elements for arrays in c.operand_arrays(i)
                         for a in arrays))
    if op == "custom-call":
        if i.target.startswith("__cudnn$fmha"):
            return _attention_flops(c, i)
        if _GEMM_TARGET.search(i.target):
            return _dot_flops(c, i)
    return 0.0


class Operations:
    """The work of every instruction of a module, memoised.

    Args:
        module: the parsed module.
    """

    def __init__(self, module: Module):
        self.module = module
        self._flops: dict[str, tuple[float, bool, bool]] = {}

    def called_flops(self, name: str) -> tuple[float, bool, bool]:
        """(FLOPs of a computation run once, whether it holds a matrix
        product, whether attention) with its loops' every trip."""
        if name in self._flops:
            return self._flops[name]
        self._flops[name] = (0.0, False, False)  # a cycle counts nothing
        c = self.module.computations.get(name)
        total, matmul, attention = 0.0, False, False
        for i in (c.instructions if c else []):
            flops, m, a = self._flops_of(c, i)
            total += flops
            matmul, attention = matmul or m, attention or a
        self._flops[name] = (total, matmul, attention)
        return self._flops[name]

    def _flops_of(self, c: Computation, i: Instruction
                  ) -> tuple[float, bool, bool]:
        own = _own_flops(c, i)
        matmul = i.opcode == "dot" or (i.opcode == "custom-call" and bool(
            _GEMM_TARGET.search(i.target)))
        attention = i.target.startswith("__cudnn$fmha") or SCOPE in i.op_name
        if i.opcode == "while":
            trips = hlo.loop_trips(self.module, i)
            body = self.called_flops(i.attr("body") or "")
            return (own + trips * body[0], body[1], attention or body[2])
        if i.opcode in ("fusion", "call", "conditional", "async-start") or \
                i.opcode == "custom-call":
            for name in i.called:
                f, m, a = self.called_flops(name)
                own, matmul, attention = own + f, matmul or m, attention or a
        return own, matmul, attention

    def work(self, c: Computation, i: Instruction) -> Work:
        """What one instruction of computation `c` computes and moves (a
        loop: its body's every trip)."""
        flops, matmul, attention = self._flops_of(c, i)
        if i.opcode in _FREE or i.opcode.endswith("-done") or \
                collective_of(self.module, i) is not None:
            return Work(0.0, 0.0, NONE)
        if i.opcode == "while":
            moved = self.loop_bytes(i)
        else:
            moved = sum(a.bytes for arrays in c.operand_arrays(i)
                        for a in arrays) + hlo.result_bytes(i.result)
        kind = ATTENTION if attention else MATMUL if matmul else MEMORY
        return Work(flops, moved, kind)

    def loop_bytes(self, loop: Instruction) -> float:
        """Bytes a loop's body reads and writes over every trip."""
        body = self.module.computations.get(loop.attr("body") or "")
        if body is None:
            return 0.0
        trips = hlo.loop_trips(self.module, loop)
        return trips * sum(self.work(body, i).bytes
                           for i in body.instructions)


def step_flops(module: Module) -> float:
    """A module's floating-point operations per run of its entry, every
    loop trip counted."""
    ops = Operations(module)
    return ops.called_flops(module.entry)[0]
