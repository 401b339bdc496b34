"""What XLA's C++ code writes while it compiles, kept off the console.

XLA logs to the process's file descriptor 2, below Python: a layout that
makes its SPMD partitioner reshard a tensor it can't reshard directly
prints pages of

    W1202 07:36:10.094396 1361 spmd_partitioner.cc:656] [SPMD] Involuntary
    full rematerialization. The compiler cannot go from sharding {A} to
    {B} efficiently for HLO operation %add.2 = f32[8,16,4]{2,1,0} add(...),
    sharding={...}, metadata={op_name="jit(step)/..."}. As the last
    resort, SPMD will replicate the tensor and then partition it ...

`captured()` points descriptor 2 at a temporary file for the span of a
compile and puts it back on every path; `parse()` turns what was written
into plain values: each such resharding (the tensor, its op, the two
shardings) and the other lines. The redirection is one per process, shared
by nested or concurrent captures (a lock and a count): the first opens it,
the last closes it. While it is open, anything any thread writes to
descriptor 2 lands in the file, so it is held only while a compile runs.
"""

from __future__ import annotations

import contextlib
import os
import re
import sys
import tempfile
import threading
from collections.abc import Iterator

# At most this much of what one capture saw is read back.
MAX_BYTES = 4 * 2 ** 20
# At most this many other lines are kept.
MAX_LINES = 50


_RESHARD = re.compile(
    r"Involuntary full rematerialization\..*?go from sharding "
    r"(?P<source>\{.*?\}) to (?P<target>\{.*?\}) (?:efficiently|without)"
    r".*?HLO operation:?\s+%(?P<instruction>[\w.\-]+)\s*=\s*"
    r"(?P<shape>[a-z0-9]+\[[0-9,]*\])?")
_OP_NAME = re.compile(r'op_name="(?P<name>(?:[^"\\]|\\.)*)"')
_NOISE = ("All log messages before absl::InitializeLog()",)


class Capture:
    """One span of captured output; `text` is set when the span ends."""

    def __init__(self, start: int):
        self.start = start
        self.text = ""


class _Redirection:
    """Descriptor 2's one redirection in this process, shared by the
    captures open at once (`lock` guards it): how many are open
    (`depth`), the original descriptor (`saved`) and the temporary file
    it points at meanwhile (`file`)."""

    def __init__(self):
        self.lock = threading.Lock()
        self.depth = 0
        self.saved: int | None = None
        self.file = None


_REDIRECTION = _Redirection()


def _open() -> bool:
    """Point descriptor 2 at a new temporary file (the first capture)."""
    try:
        sys.stderr.flush()
    except Exception:  # noqa: BLE001 - a closed or odd sys.stderr
        pass
    try:
        saved = os.dup(2)
    except OSError:
        return False
    target = tempfile.TemporaryFile()
    try:
        os.dup2(target.fileno(), 2)
    except OSError:
        os.close(saved)
        target.close()
        return False
    _REDIRECTION.saved, _REDIRECTION.file = saved, target
    return True


def _close() -> None:
    """Put the original descriptor 2 back (the last capture)."""
    try:
        sys.stderr.flush()
    except Exception:  # noqa: BLE001
        pass
    saved, target = _REDIRECTION.saved, _REDIRECTION.file
    _REDIRECTION.saved, _REDIRECTION.file = None, None
    try:
        os.dup2(saved, 2)
    finally:
        os.close(saved)
        target.close()


def _read(start: int) -> str:
    fd = _REDIRECTION.file.fileno()
    end = os.lseek(fd, 0, os.SEEK_END)
    size = max(0, min(end - start, MAX_BYTES))
    return os.pread(fd, size, start).decode("utf-8", "replace")


@contextlib.contextmanager
def captured() -> Iterator[Capture]:
    """Keep what is written to descriptor 2 meanwhile; the original is
    back when the block ends, however it ends. Where descriptor 2 can't be
    redirected, nothing is captured and nothing fails."""
    with _REDIRECTION.lock:
        ok = _REDIRECTION.depth > 0 or _open()
        if ok:
            _REDIRECTION.depth += 1
            capture = Capture(os.lseek(_REDIRECTION.file.fileno(), 0,
                                       os.SEEK_END))
        else:
            capture = Capture(0)
    try:
        yield capture
    finally:
        if ok:
            with _REDIRECTION.lock:
                try:
                    sys.stderr.flush()
                    capture.text = _read(capture.start)
                finally:
                    _REDIRECTION.depth -= 1
                    if _REDIRECTION.depth == 0:
                        _close()


def parse(text: str) -> dict:
    """What XLA wrote, as plain values.

    Returns:
        `reshardings`: columns `instruction` (the HLO instruction), `shape`
        (its per-device shape and type), `op_name` (the JAX op, whose
        name stack names the layer), `source` and `target` (XLA's
        shardings), one entry per tensor XLA replicated in full to reshard
        it; `log`: the other non-empty lines, at most `MAX_LINES`, and
        `log_lines`, how many there were.
    """
    rows: dict[str, list[str]] = {k: [] for k in
                                  ("instruction", "shape", "op_name",
                                   "source", "target")}
    other = []
    for line in text.splitlines():
        if not line.strip() or any(n in line for n in _NOISE):
            continue
        m = _RESHARD.search(line)
        if not m:
            other.append(line.rstrip())
            continue
        name = _OP_NAME.search(line[m.end():])
        rows["instruction"].append(m.group("instruction"))
        rows["shape"].append(m.group("shape") or "")
        rows["op_name"].append(name.group("name") if name else "")
        rows["source"].append(m.group("source"))
        rows["target"].append(m.group("target"))
    return {"reshardings": rows, "log": other[:MAX_LINES],
            "log_lines": len(other)}
