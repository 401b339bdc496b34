"""Checkpoint directories on disk: which entries are steps, who wrote them,
and whether each one is complete.

A step kerasmesh committed is a real directory named by its number
(`12/`) holding a marker, `kerasmesh_files.json`: the step's number and
every file of the step with its size and SHA-256, written once Orbax had
committed the arrays. Only such steps are ever pruned or replaced
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

import hashlib
import json
import os
import re
from typing import Any

from ..core.checks import is_whole
from ..core.errors import KerasmeshError
from ..core import kinds

FILE_LIST = "kerasmesh_files.json"
MARKER_FORMAT = "kerasmesh-checkpoint-step"
MARKER_VERSION = 2
# R's integers: the largest step R can name.
MAX_STEP = 2**31 - 1
_STEP_DIR = re.compile(r"^(?P<step>[0-9]+)(?P<tmp>\.orbax-checkpoint-tmp.*)?$")
# kerasmesh's own entries: a new step before it is swapped in, an old one
# swapped out (see commit.py).
STAGING = ".kerasmesh-staging-"
RETIRED = ".kerasmesh-retired-"
_OWN_DIR = re.compile(r"^\.kerasmesh-(?P<kind>staging|retired)-"
                      r"(?P<step>[0-9]+)(?P<tmp>\.orbax-checkpoint-tmp.*)?$")
_CHUNK = 1 << 20


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


def check_directory(directory: Any) -> str:
    """An absolute path from a non-empty string.

    Raises:
        KerasmeshError: `argument` for anything else; `checkpoint_directory`
            when the path is a file or lies under one.
    """
    if not isinstance(directory, str) or not directory:
        raise KerasmeshError(
            kinds.ARGUMENT, "`dir` must be a single non-empty string.",
            received=directory)
    path = os.path.abspath(os.path.expanduser(directory))
    blocker = file_in_the_way(path)
    if blocker is not None:
        what = "is a file" if blocker == path else \
            f"lies under a file, {blocker}"
        raise KerasmeshError(
            kinds.CHECKPOINT_DIRECTORY, "`dir` must be a directory.",
            x=f"{path} {what}.",
            i="Pass the path of a directory, or of one to create.")
    return path


def file_in_the_way(path: str) -> str | None:
    """`path` or its nearest existing ancestor when that is not a
    directory, else None."""
    probe = path
    while not os.path.lexists(probe):
        parent = os.path.dirname(probe)
        if parent == probe:
            return None
        probe = parent
    return None if os.path.isdir(probe) else probe


def check_step(step: Any, allow_none: bool = True) -> int | None:
    """A step number: a whole number from 0 to `MAX_STEP` (or None).

    Raises:
        KerasmeshError: `argument`, naming `step` and the value.
    """
    if step is None and allow_none:
        return None
    if not is_whole(step) or step > MAX_STEP:
        raise KerasmeshError(
            kinds.ARGUMENT, f"`step` must be a whole number from 0 to "
            f"{MAX_STEP}.", received=step)
    return int(step)


def check_count(x: Any, name: str, allow_none: bool = True) -> int | None:
    """A positive whole number (`keep`, `every`), or None.

    Raises:
        KerasmeshError: `argument`, naming the argument and the value.
    """
    if x is None and allow_none:
        return None
    if not is_whole(x, 1) or x > MAX_STEP:
        raise KerasmeshError(
            kinds.ARGUMENT, f"`{name}` must be a whole number from 1 to "
            f"{MAX_STEP}.", received=x)
    return int(x)


def sync_processes(key: str) -> None:
    """A barrier across the processes of a distributed run (none alone)."""
    import jax

    if jax.process_count() > 1:
        from jax.experimental import multihost_utils

        multihost_utils.sync_global_devices(key)


# Entries of a checkpoint directory -----------------------------------------

def step_dirs(directory: str) -> list[dict]:
    """Number-named subdirectories, committed or not, ordered by step;
    kerasmesh's own temporary entries stand in for a missing step."""
    if not os.path.isdir(directory):
        return []
    out, own = [], {}
    for name in os.listdir(directory):
        path = os.path.join(directory, name)
        match = _STEP_DIR.match(name)
        if match and os.path.isdir(path):
            out.append({"step": int(match.group("step")), "path": path,
                        "committed": match.group("tmp") is None,
                        "link": os.path.islink(path)})
        mine = _OWN_DIR.match(name)
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


def read_json(path: str) -> Any:
    """A JSON file's value, or None when it is missing or malformed."""
    try:
        with open(path, encoding="utf-8") as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def read_metadata(path: str) -> dict | None:
    """Orbax's step metadata (`_CHECKPOINT_METADATA`), None if unreadable."""
    meta = read_json(os.path.join(path, "_CHECKPOINT_METADATA"))
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


# Markers: what kerasmesh committed -------------------------------------------

def file_digest(path: str) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(_CHUNK), b""):
            digest.update(chunk)
    return digest.hexdigest()


def step_files(path: str) -> dict[str, dict]:
    """Every file of a step but the marker: size and SHA-256."""
    files = {}
    for root, _, names in os.walk(path):
        for name in names:
            full = os.path.join(root, name)
            rel = os.path.relpath(full, path)
            if not rel.startswith(FILE_LIST):
                files[rel] = {"size": os.path.getsize(full),
                              "sha256": file_digest(full)}
    return files


def write_marker(path: str, step: int) -> None:
    """Seal a written step: its marker, written and renamed atomically."""
    marker = {"format": MARKER_FORMAT, "version": MARKER_VERSION,
              "step": int(step), "files": step_files(path)}
    tmp = os.path.join(path, FILE_LIST + ".tmp")
    with open(tmp, "w", encoding="utf-8") as f:
        json.dump(marker, f)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, os.path.join(path, FILE_LIST))


def read_marker(path: str, step: int) -> dict | None:
    """The step's marker when it is kerasmesh's and names `step`."""
    marker = read_json(os.path.join(path, FILE_LIST))
    if not isinstance(marker, dict) or \
            marker.get("format") != MARKER_FORMAT or \
            marker.get("step") != step or \
            not isinstance(marker.get("files"), dict):
        return None
    return marker


def file_problem(path: str, name: str, record: Any, deep: bool) -> str | None:
    """What is wrong with one listed file, or None."""
    if not isinstance(record, dict) or not isinstance(record.get("size"), int):
        return f"its file list ({FILE_LIST}) is malformed at {name}"
    full = os.path.join(path, name)
    if not os.path.isfile(full):
        return f"file {name} is missing"
    size = os.path.getsize(full)
    if size != record["size"]:
        return f"file {name} has {size} bytes, not {record['size']}"
    if deep and file_digest(full) != record.get("sha256"):
        return f"file {name} is damaged (its checksum differs)"
    return None


def marker_problem(path: str, marker: dict, deep: bool) -> str | None:
    """Why a sealed step is damaged (missing, resized or changed files)."""
    for name, record in sorted(marker["files"].items()):
        problem = file_problem(path, name, record, deep)
        if problem is not None:
            return problem
    return None


# Steps and their completeness ----------------------------------------------

def describe_step(step: dict, deep: bool = True) -> dict:
    """A step with `writer` ("kerasmesh", "orbax" for another tool such as
    Keras's `OrbaxCheckpoint`, "unknown"), `owned` (kerasmesh committed
    it, so it may be pruned or replaced), `complete` and `problem`."""
    path, owned = step["path"], False
    meta = read_metadata(path) if step["committed"] else None
    marker = read_marker(path, step["step"]) if step["committed"] else None
    if not step["committed"]:
        writer, problem = "unknown", \
            "writing did not finish (Orbax's temporary directory)"
    elif marker is not None:
        writer, owned = "kerasmesh", not step["link"]
        problem = marker_problem(path, marker, deep)
    elif kerasmesh_metadata(meta) is not None or \
            os.path.lexists(os.path.join(path, FILE_LIST)):
        writer = "kerasmesh"
        problem = f"its file list ({FILE_LIST}) is missing or malformed"
    elif commit_time(meta) is not None:
        writer, problem = "orbax", None
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
    what = "does not exist" if not os.path.exists(directory) else \
        "has no step directories"
    return KerasmeshError(
        kinds.CHECKPOINT_DIRECTORY, "`dir` must be a checkpoint directory.",
        x=f"{directory} {what}.",
        i="Write one with `save_checkpoint()` or "
          "`checkpoint_callback()`.")


def pick_step(directory: str, step: Any = None) -> tuple[dict, list[dict]]:
    """The step to read, and the newer steps passed over for it: `step`,
    or the newest complete one (checksums checked newest first).

    Raises:
        KerasmeshError: `checkpoint_directory` (no steps), `checkpoint_step`
            (no such step), `checkpoint_incomplete` (not complete or
            damaged, naming the step and the file).
    """
    steps = scan(directory, deep=False)
    if not steps:
        raise not_a_checkpoint(directory)
    if step is None:
        passed = []
        for s in reversed(steps):
            s = describe_step(s) if s["complete"] else s
            if s["complete"]:
                return s, passed[::-1]
            passed.append(s)
        raise KerasmeshError(
            kinds.CHECKPOINT_INCOMPLETE,
            "The checkpoint directory must hold a complete step.",
            [("x", f"Step {s['step']}: {s['problem']}.") for s in steps])
    found = [s for s in steps if s["step"] == step]
    if not found:
        raise KerasmeshError(
            kinds.CHECKPOINT_STEP, f"Step {step} must be in the checkpoint.",
            i="Steps saved: " +
              ", ".join(str(s["step"]) for s in steps) + ".")
    chosen = describe_step(found[-1])
    if not chosen["complete"]:
        raise KerasmeshError(
            kinds.CHECKPOINT_INCOMPLETE, f"Step {step} must be complete.",
            x=f"Step {step} ({chosen['path']}): {chosen['problem']}.")
    return chosen, []
