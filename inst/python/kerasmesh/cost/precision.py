"""bfloat16 costed as GPUs and TPUs run it, on XLA's CPU backend.

XLA's CPU compiler has no bfloat16 arithmetic: its `all-reduce-promotion`
and `float-normalization-bf16` passes widen every bfloat16 operation it
can't run, collectives included, to float32 (no compiler option turns
this off: disabling the passes fails in code generation). Compiled there,
a `mixed_bfloat16` model's activation collectives and temporaries are as
large as a float32 model's, where a GPU or TPU keeps them at 2 bytes.

float16 has the same size and the CPU backend keeps it. So on CPU, before
compiling, the lowered module's bfloat16 types are written as float16
(`retype_bfloat16()`): the compile then sizes every buffer and collective
at 2 bytes, as a GPU does, while XLA sees the same program otherwise. The
module only ever gets compiled for its figures, never run, so what the
constants would mean in float16 does not matter. Collectives read from
it are named back to bfloat16 (`rename_dtypes()`).

This reaches into JAX's lowering (`Lowered._lowering._hlo`): where that
differs (another JAX), nothing is retyped and the cost says so.
"""

from __future__ import annotations

import re
from typing import Any

# What a compile did with bfloat16 (the cost's `bfloat16` field).
ABSENT = "absent"        # the step has no bfloat16
AS_FLOAT16 = "float16"   # compiled as float16: 2 bytes, as on GPUs
WIDENED = "float32"      # compiled by the CPU backend, widened to float32
NATIVE = "native"        # a GPU or TPU backend, which keeps it

# A bfloat16 element type in MLIR text: `tensor<8x32xbf16>`,
# `tensor<bf16>`, a block argument `%a: bf16`; not inside a name.
_BF16 = re.compile(r"(?<=[<x\s,(:])bf16\b")
_F16 = re.compile(r"(?<=[<x\s,(:])f16\b")


def retype_bfloat16(lowered: Any, on_cpu: bool) -> tuple[str, Any]:
    """Retype a lowered step's bfloat16 to float16 when XLA's CPU compiler
    compiles it (`on_cpu`, which `target.py` decides).

    Returns:
        (what was done: `ABSENT`, `AS_FLOAT16`, `WIDENED` or `NATIVE`;
        the module as it was, for `restore()`, or None).
    """
    try:
        original = lowered._lowering._hlo
        text = original.operation.get_asm(enable_debug_info=True)
    except Exception:  # noqa: BLE001 - JAX's internals moved
        text, original = lowered.as_text(), None
    if not _BF16.search(text):
        return ABSENT, None
    if not on_cpu:
        return NATIVE, None
    if original is None:
        return WIDENED, None
    try:
        from jax._src.interpreters import mlir
        from jax._src.lib.mlir import ir

        with mlir.make_ir_context():
            module = ir.Module.parse(_BF16.sub("f16", text))
        lowered._lowering._hlo = module
        lowered._lowering._executable = None
    except Exception:  # noqa: BLE001 - JAX's internals or MLIR refused
        return WIDENED, None
    return AS_FLOAT16, (original, bool(_F16.search(text)))


def restore(lowered: Any, saved: Any) -> None:
    """Put back the module `retype_bfloat16()` replaced."""
    if saved is not None:
        lowered._lowering._hlo = saved[0]
        lowered._lowering._executable = None


def rename_dtypes(ops: list[dict], saved: Any) -> list[dict]:
    """Collectives of a retyped compile with float16 named bfloat16 again,
    when the step had no float16 of its own (else they stay float16)."""
    if saved is None or saved[1]:
        return ops
    for op in ops:
        op["dtypes"] = ["bf16" if d == "f16" else d for d in op["dtypes"]]
    return ops
