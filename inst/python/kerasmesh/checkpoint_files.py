"""Checkpoint directories: steps, and whether each one is complete.

Orbax writes a step into a temporary directory that it renames to the
step's number once every process has written its shards; kerasmesh then
writes the step's file list (process 0, write and rename). A step is
complete when Orbax committed it and every listed file is there with its
size. A step whose list is missing (its writer died right after the
commit) counts as incomplete: a restore falls back to the step before.
"""

from __future__ import annotations

import json
import os
import re
from typing import Any

from .errors import KerasmeshError

FILE_LIST = "kerasmesh_files.json"
_STEP_DIR = re.compile(r"^(?P<step>[0-9]+)(?P<tmp>\.orbax-checkpoint-tmp.*)?$")


# Orbax and the directory ----------------------------------------------------

def orbax():
    """`orbax.checkpoint.v1`, or a `checkpoint_orbax` error without it."""
    try:
        from orbax.checkpoint import v1 as ocp
    except ImportError as e:
        raise KerasmeshError(
            "checkpoint_orbax", "Checkpoints need the Python package "
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
    """An absolute path from a non-empty string."""
    if not isinstance(directory, str) or not directory:
        raise KerasmeshError(
            "argument", "`dir` must be a single non-empty string.",
            received=directory)
    return os.path.abspath(os.path.expanduser(directory))


def process_index() -> int:
    import jax

    return int(jax.process_index())


def sync_processes(key: str) -> None:
    """A barrier across the processes of a distributed run (none alone)."""
    import jax

    if jax.process_count() > 1:
        from jax.experimental import multihost_utils

        multihost_utils.sync_global_devices(key)


# Steps and their completeness ----------------------------------------------

def step_dirs(directory: str) -> list[dict]:
    """Step subdirectories, committed or not, ordered by step."""
    if not os.path.isdir(directory):
        return []
    out = []
    for name in os.listdir(directory):
        match = _STEP_DIR.match(name)
        path = os.path.join(directory, name)
        if match and os.path.isdir(path):
            out.append({"step": int(match.group("step")), "path": path,
                        "committed": match.group("tmp") is None})
    return sorted(out, key=lambda s: (s["step"], s["committed"]))


def read_metadata(path: str) -> dict | None:
    """Orbax's step metadata (`_CHECKPOINT_METADATA`), None if unreadable."""
    try:
        with open(os.path.join(path, "_CHECKPOINT_METADATA")) as f:
            meta = json.load(f)
    except (OSError, ValueError):
        return None
    return meta if isinstance(meta, dict) else None


def kerasmesh_metadata(meta: dict | None) -> dict | None:
    custom = (meta or {}).get("custom_metadata") or {}
    found = custom.get("kerasmesh")
    return found if isinstance(found, dict) else None


def step_problem(step: dict) -> str | None:
    """Why a step can't be restored, or None when it is complete."""
    path = step["path"]
    if not step["committed"]:
        return "writing did not finish (Orbax's temporary directory)"
    meta = read_metadata(path)
    if meta is None or not meta.get("commit_timestamp_nsecs"):
        return "Orbax's commit record is missing"
    if kerasmesh_metadata(meta) is None:
        # Written by another tool (say Keras's OrbaxCheckpoint): Orbax's
        # commit is all there is to check.
        return None
    try:
        with open(os.path.join(path, FILE_LIST)) as f:
            files = json.load(f)["files"]
    except (OSError, ValueError, KeyError, TypeError):
        return f"its file list ({FILE_LIST}) is missing"
    for name, size in sorted(files.items()):
        full = os.path.join(path, name)
        if not os.path.isfile(full):
            return f"file {name} is missing"
        if os.path.getsize(full) != size:
            return f"file {name} has {os.path.getsize(full)} bytes, " \
                   f"not {size}"
    return None


def write_file_list(path: str) -> None:
    """List the step's files and sizes, atomically (write, then rename)."""
    files = {}
    for root, _, names in os.walk(path):
        for name in names:
            full = os.path.join(root, name)
            rel = os.path.relpath(full, path)
            if rel != FILE_LIST and not rel.startswith(FILE_LIST):
                files[rel] = os.path.getsize(full)
    tmp = os.path.join(path, FILE_LIST + ".tmp")
    with open(tmp, "w") as f:
        json.dump({"files": files}, f)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, os.path.join(path, FILE_LIST))


def scan(directory: str) -> list[dict]:
    """Every step with `complete` and `problem`."""
    out = []
    for step in step_dirs(directory):
        problem = step_problem(step)
        out.append(dict(step, complete=problem is None, problem=problem))
    return out


def not_a_checkpoint(directory: str) -> KerasmeshError:
    what = "does not exist" if not os.path.exists(directory) else \
        "has no step directories"
    return KerasmeshError(
        "checkpoint_directory", "`dir` must be a checkpoint directory.",
        x=f"{directory} {what}.",
        i="Write one with `save_checkpoint()` or "
          "`checkpoint_callback()`.")


def pick_step(directory: str, step: Any = None) -> dict:
    """The step to read: `step`, or the newest complete one.

    Raises:
        KerasmeshError: `checkpoint_directory` (no steps), `checkpoint_step`
            (no such step), `checkpoint_incomplete` (not complete).
    """
    steps = scan(directory)
    if not steps:
        raise not_a_checkpoint(directory)
    if step is None:
        complete = [s for s in steps if s["complete"]]
        if not complete:
            raise KerasmeshError(
                "checkpoint_incomplete",
                "The checkpoint directory must hold a complete step.",
                [("x", f"Step {s['step']}: {s['problem']}.") for s in steps])
        return complete[-1]
    found = [s for s in steps if s["step"] == step]
    if not found:
        raise KerasmeshError(
            "checkpoint_step", f"Step {step} must be in the checkpoint.",
            i="Steps saved: " +
              ", ".join(str(s["step"]) for s in steps) + ".")
    chosen = found[-1]
    if not chosen["complete"]:
        raise KerasmeshError(
            "checkpoint_incomplete", f"Step {step} must be complete.",
            x=f"Step {step}: {chosen['problem']}.")
    return chosen
