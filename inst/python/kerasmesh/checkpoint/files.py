"""Checkpoint directories on disk: which entries are steps, who wrote them,
and whether each one is complete.

A step kerasmesh committed is a real directory named by its number
(`12/`) holding a marker, `kerasmesh_files.json`: the step's number and
every file of the step with its size and CRC-32, written once Orbax had
committed the arrays (`seal.py`). Only such steps are ever pruned or replaced
(`commit.py`); anything else in the directory is listed for
what it is and left alone:

* a number-named directory with Orbax's commit record but no marker was
  written by another tool (Keras's `OrbaxCheckpoint`): it can be read;
* `N.orbax-checkpoint-tmp*` is an unfinished Orbax write (another tool's);
* any other number-named directory is not a checkpoint step (a user's).

Every step is checked on its own: an unreadable marker or metadata file
makes that step incomplete, never the whole directory unreadable.
kerasmesh's own temporary entries (`.kerasmesh-*`, see
`commit.py`) are never listed as steps; one that holds the only
committed copy of a step after a save was killed between two renames
stands in for that step.
"""

from __future__ import annotations

import os
import re
from typing import Any

from ..core.errors import KerasmeshError
from ..core import kinds
from .seal import (FILE_LIST, is_regular, marker_problem, read_json,
                   read_marker, step_names)

# R's integers: the largest step R can name.
MAX_STEP = 2**31 - 1
# A step's number as Orbax writes it, without leading zeros: a folder
# "00010" beside "10" is no second step 10 (and nothing kerasmesh wrote).
STEP_NUMBER = r"(?P<step>0|[1-9][0-9]*)"
STEP_DIR = re.compile(r"^" + STEP_NUMBER +
                       r"(?P<tmp>\.orbax-checkpoint-tmp.*)?$")
# A folder Orbax never writes, named in the error that finds no steps.
_LEADING_ZEROS = re.compile(r"^0[0-9]+$")
# kerasmesh's own entries: a new step before it is swapped in, an old one
# swapped out (see commit.py).
STAGING = ".kerasmesh-staging-"
RETIRED = ".kerasmesh-retired-"
# What every step Orbax writes holds: its step metadata, the commit record.
ORBAX_RECORD = "_CHECKPOINT_METADATA"
OWN_DIR = re.compile(r"^\.kerasmesh-(?P<kind>staging|retired)-"
                      + STEP_NUMBER +
                      r"(?P<tmp>\.orbax-checkpoint-tmp.*)?$")


# Orbax and the directory ----------------------------------------------------

def orbax():
    """`orbax.checkpoint.v1`, or a `checkpoint_orbax` error without it."""
    try:
        from orbax.checkpoint import v1 as ocp
    except ImportError as e:
        raise KerasmeshError(
            kinds.CHECKPOINT_ORBAX, "Checkpoints need the Python package "
            "orbax-checkpoint.",
            x=f"It can't be imported: {e}.",
            i="Install kerasmesh's Python packages with "
              "`kerasmesh::install_kerasmesh()` and restart R, or "
              "`pip install orbax-checkpoint` into the Python R uses. "
              "reticulate's managed Python (reticulate >= 1.41) has it "
              "when nothing started Python before kerasmesh loaded: "
              "kerasmesh declares it with `reticulate::py_require()`.") \
            from e
    return ocp


# Entries of a checkpoint directory -----------------------------------------

def step_dirs(directory: str) -> list[dict]:
    """Number-named subdirectories, committed or not, ordered by step;
    kerasmesh's own temporary entries stand in for a missing step."""
    if not os.path.isdir(directory):
        return []
    out, own = [], {}
    for name in os.listdir(directory):
        path = os.path.join(directory, name)
        match = STEP_DIR.match(name)
        if match and os.path.isdir(path):
            out.append({"step": int(match.group("step")), "path": path,
                        "committed": match.group("tmp") is None,
                        "link": os.path.islink(path)})
        mine = OWN_DIR.match(name)
        if mine and not mine.group("tmp") and os.path.isdir(path) and \
                not os.path.islink(path):
            own.setdefault(int(mine.group("step")), {})[
                mine.group("kind")] = path
    present = {s["step"] for s in out if s["committed"]}
    for step, paths in own.items():
        stand_in = stand_in_path(step, paths, present)
        if stand_in is not None:
            out.append({"step": step, "path": stand_in, "committed": True,
                        "link": False})
    return sorted(out, key=lambda s: (s["step"], s["committed"]))


def stand_in_path(step: int, paths: dict, present: set) -> str | None:
    """The sealed copy of a step that a killed swap left outside its place:
    the new one first, else the old one; None when the step is in place."""
    if step in present:
        return None
    for kind in ("staging", "retired"):
        if kind in paths and read_marker(paths[kind], step) is not None:
            return paths[kind]
    return None


def read_metadata(path: str) -> dict | None:
    """Orbax's step metadata (`_CHECKPOINT_METADATA`), None if unreadable."""
    meta = read_json(os.path.join(path, ORBAX_RECORD))
    return meta if isinstance(meta, dict) else None


def kerasmesh_metadata(meta: dict | None) -> dict | None:
    custom = (meta or {}).get("custom_metadata")
    found = custom.get("kerasmesh") if isinstance(custom, dict) else None
    return found if isinstance(found, dict) else None


def commit_time(meta: dict | None) -> float | None:
    """When Orbax committed a step, in seconds since the epoch."""
    stamp = (meta or {}).get("commit_timestamp_nsecs")
    ok = isinstance(stamp, (int, float)) and not isinstance(stamp, bool)
    return stamp / 1e9 if ok and stamp > 0 else None


# Steps and their completeness ----------------------------------------------

def irregular_entry(path: str) -> str | None:
    """The first entry of a step that is neither a folder nor a regular
    file (a FIFO, a socket, a device), which no reader may open."""
    for root, _, names in os.walk(path):
        for name in sorted(names):
            if not is_regular(os.path.join(root, name)):
                return os.path.relpath(os.path.join(root, name), path)
    return None


def orbax_problem(path: str) -> str | None:
    """What makes a step another tool wrote unreadable: an entry no reader
    may open, or array metadata that can't be read."""
    odd = irregular_entry(path)
    if odd is not None:
        return f"it holds {odd}, which is not a regular file"
    arrays = os.path.join("pytree", "_METADATA")
    if os.path.lexists(os.path.join(path, arrays)) and \
            not isinstance(read_json(os.path.join(path, arrays)), dict):
        return f"its array metadata ({arrays}) can't be read"
    return None


def orbax_data_problem(marker: dict) -> str | None:
    """Why a marker seals no step Orbax wrote: every step Orbax writes
    holds its commit record, and the marker lists every file of the step,
    so a marker that lists none (written by hand, or over a folder of
    other files) seals nothing to read."""
    if ORBAX_RECORD in marker["files"]:
        return None
    return f"it holds nothing Orbax wrote (its file list ({FILE_LIST}) " \
        f"names no {ORBAX_RECORD})"


def file_list_problem(path: str, step: int) -> str:
    """Why a step kerasmesh began has no usable file list: none, one that
    is not a regular file (a FIFO, never opened), one of another step (a
    folder or link named for another step), or one that can't be read as
    a list."""
    listed = os.path.join(path, FILE_LIST)
    if os.path.lexists(listed) and not is_regular(listed):
        return f"its file list ({FILE_LIST}) is not a regular file"
    marker = read_json(listed)
    other = marker.get("step") if isinstance(marker, dict) else None
    if isinstance(other, int) and other != step and \
            read_marker(path, other) is not None:
        return f"its file list ({FILE_LIST}) is step {other}'s: it is " \
            f"named {step} but holds step {other}"
    return f"its file list ({FILE_LIST}) is missing or malformed"


def foreign_files(path: str, marker: dict) -> list[str]:
    """Files in a sealed step that its marker does not list (put there
    after it was saved): a step holding them is not kerasmesh's alone, and
    is never pruned or replaced."""
    return [n for n in step_names(path) if n not in marker["files"]]


def describe_step(step: dict, deep: bool = True) -> dict:
    """A step with `writer` ("kerasmesh", "orbax" for another tool such as
    Keras's `OrbaxCheckpoint`, "unknown"), `owned` (kerasmesh committed
    it, so it may be pruned or replaced), `complete` and `problem`.
    Without `deep`, checksums are not compared (sizes are)."""
    path, owned = step["path"], False
    meta = read_metadata(path) if step["committed"] else None
    marker = read_marker(path, step["step"]) if step["committed"] else None
    if not step["committed"]:
        writer, problem = "unknown", \
            "writing did not finish (Orbax's temporary directory)"
    elif marker is not None:
        writer = "kerasmesh"
        owned = not step["link"] and not foreign_files(path, marker)
        problem = orbax_data_problem(marker) or \
            marker_problem(path, marker, deep)
    elif kerasmesh_metadata(meta) is not None or \
            os.path.lexists(os.path.join(path, FILE_LIST)):
        writer, problem = "kerasmesh", file_list_problem(path, step["step"])
    elif commit_time(meta) is not None:
        writer, problem = "orbax", orbax_problem(path)
    else:
        writer, problem = "unknown", "Orbax's commit record is missing"
    return dict(step, writer=writer, owned=owned, complete=problem is None,
                problem=problem, time=commit_time(meta))


def scan(directory: str, deep: bool = True) -> list[dict]:
    """Every step with `writer`, `owned`, `complete`, `problem`, `time`;
    `deep` also compares every file's checksum with its marker."""
    out = []
    for step in step_dirs(directory):
        try:
            out.append(describe_step(step, deep))
        except OSError as e:  # a file vanished or can't be read
            out.append(dict(step, writer="unknown", owned=False,
                            complete=False, time=None,
                            problem=f"it can't be read ({e.strerror})"))
    return out


def not_a_checkpoint(directory: str) -> KerasmeshError:
    if not os.path.exists(directory):
        what = "does not exist"
    else:
        zeros = sorted(name for name in _listing(directory)
                       if _LEADING_ZEROS.match(name))
        shown = ", ".join(zeros[:3]) + (" ..." if len(zeros) > 3 else "")
        verb = "is not a step" if len(zeros) == 1 else "are not steps"
        what = "has no step directories" + (
            f" (Orbax names steps without leading zeros: {shown} {verb})"
            if zeros else "")
    return KerasmeshError(
        kinds.CHECKPOINT_DIRECTORY, "`dir` must be a checkpoint directory.",
        x=f"{directory} {what}.",
        i="Write one with `save_checkpoint()` or "
          "`callback_checkpoint()`.")


def _listing(directory: str) -> list[str]:
    try:
        return os.listdir(directory)
    except OSError:
        return []


def newest_first(directory: str, step: int | None = None) -> list[dict]:
    """The steps a reader may try, newest first, checked without
    checksums: every step, or only `step`.

    Raises:
        KerasmeshError: `checkpoint_directory` (no steps), `checkpoint_step`
            (no such step).
    """
    steps = scan(directory, deep=False)
    if not steps:
        raise not_a_checkpoint(directory)
    if step is None:
        return steps[::-1]
    found = [s for s in steps if s["step"] == step]
    if not found:
        raise KerasmeshError(
            kinds.CHECKPOINT_STEP, f"Step {step} must be in the checkpoint.",
            i="Steps saved: " +
              ", ".join(str(s["step"]) for s in steps) + ".")
    return found[-1:]


def incomplete(step: int | None, tried: list[dict]) -> KerasmeshError:
    """No step of `tried` (newest first) can be read: a
    `checkpoint_incomplete` error naming each one's problem."""
    if step is None:
        return KerasmeshError(
            kinds.CHECKPOINT_INCOMPLETE,
            "The checkpoint directory must hold a complete step.",
            [("x", f"Step {s['step']}: {s['problem']}.") for s in tried[::-1]])
    s = tried[0]
    return KerasmeshError(
        kinds.CHECKPOINT_INCOMPLETE, f"Step {step} must be complete.",
        x=f"Step {step} ({s['path']}): {s['problem']}.")


def pick_step(directory: str, step: Any = None) -> tuple[dict, list[dict]]:
    """The step to describe, and the newer steps passed over for it:
    `step`, or the newest complete one (checksums checked newest first).

    Raises:
        KerasmeshError: `checkpoint_directory` (no steps), `checkpoint_step`
            (no such step), `checkpoint_incomplete` (not complete or
            damaged, naming the step and the file).
    """
    passed = []
    for s in newest_first(directory, step):
        s = describe_step(s) if s["complete"] else s
        if s["complete"]:
            return s, passed[::-1]
        passed.append(s)
    raise incomplete(step, passed)
