"""Sharded checkpoints with Orbax: save, restore onto any mesh, inspect.

A checkpoint directory holds one subdirectory per step, written by Orbax
(`orbax.checkpoint.v1`, the library behind Keras's `OrbaxCheckpoint`):
every process writes the shards it holds. The state is laid out as Keras's
state tree (`{"pytree": ...}` with the trainable, non-trainable and
optimizer variables; metrics are not saved), so Keras's own
`model.load_weights(dir)` reads a kerasmesh checkpoint, and
`restore_checkpoint()` reads a directory Keras's `OrbaxCheckpoint` wrote.

kerasmesh adds the layout of every variable (mesh, axes per dimension),
the step and the epoch to Orbax's metadata of the step, and a marker with
every file's size and checksum once the step is committed: which
directories are kerasmesh's steps and whether each is intact is
`files.py`'s topic; how a step is committed, replaced and
pruned without losing one, `commit.py`'s. The callback for
`fit()` lives in `callback.py`.
"""

from __future__ import annotations

import errno
import os
import re
from typing import Any

from . import commit
from .files import (check_count, check_directory, check_step,
                               kerasmesh_metadata, not_a_checkpoint, orbax,
                               pick_step, read_metadata, scan,
                               sync_processes, write_marker)
from .variables import (abstract_tree, build_optimizer,
                                   check_capacity, check_match,
                                   describe_variables, flatten, match_key,
                                   keyed_variables, nest, target_sharding)
from ..core.errors import KerasmeshError, warn
from ..distributed.initialize import process_index
from ..core import kinds

_DISK_ERRORS = (errno.ENOSPC, errno.EDQUOT, errno.EROFS, errno.EACCES,
                errno.EPERM, errno.EIO)
# How TensorStore (Orbax's array writer) reports an OS error: a ValueError
# such as "RESOURCE_EXHAUSTED: Failed writing: ...: No space left on
# device [os_error_code='28']".
_TENSORSTORE_OS_ERROR = re.compile(r"os_error_code='(\d+)'")


# Save ----------------------------------------------------------------------

def save_step(model: Any, directory: str, step: int,
              epoch: int | None = None, overwrite: bool = False,
              keep: int | None = None, start: int | None = None) -> dict:
    """Write one step, then prune; every process must call it.

    The step is written aside and swapped in (`commit.py`),
    under the directory's lock. `keep`: keep the newest `keep` complete
    steps. `start`: also delete kerasmesh's steps after `start` (a run
    resumed from `start` replaces them).

    Raises:
        KerasmeshError: `checkpoint_exists` when the step is complete and
            `overwrite` is False, or is not kerasmesh's; `checkpoint_write`
            when the file system refuses the write (disk full).
    """
    import jax

    sync = getattr(model, "jax_state_sync", None)
    if sync is not None:
        sync()  # fit() keeps the state outside the variables between steps
    build_optimizer(model)  # so that a restore finds the slots it creates
    variables = keyed_variables(model)
    meta = {"kerasmesh": {
        "version": 1, "step": step, "epoch": epoch,
        "process_count": int(jax.process_count()),
        "variables": describe_variables(variables)}}
    tree = nest({k: v.value for k, v in variables.items()})
    commit.make_directory(directory)
    with commit.directory_lock(directory):
        check_target(directory, step, overwrite)
        path = write_agreed(directory, step, tree, meta)
        if process_index() == 0:
            commit.prune(directory, keep, step)
            if start is not None:
                commit.remove_beyond(directory, start, step)
            commit.pause_point("pruned")
        sync_processes(f"kerasmesh_checkpoint_{step}")
    return {"step": step, "epoch": epoch, "path": path,
            "variables": len(variables)}


def check_target(directory: str, step: int, overwrite: bool) -> None:
    """Process 0 checks that `step` may be written and clears what a killed
    save left; every process raises when it refused."""
    refusal = None
    if process_index() == 0:
        try:
            commit.recover(directory)  # first: it may put a step back
            commit.check_target(directory, step, overwrite)
        except KerasmeshError as e:
            refusal = e
    if commit.agreed(refusal is not None):
        raise refusal or KerasmeshError(
            kinds.CHECKPOINT_EXISTS, f"Step {step} must be one process 0 may "
            "write.", x="Process 0 refused to save it; its error says why.")


def write_agreed(directory: str, step: int, tree: dict, meta: dict) -> str:
    """`write_step()`, raising in every process when one failed."""
    failure = None
    try:
        path = write_step(directory, step, tree, meta)
    except Exception as e:  # noqa: BLE001 - raised again below
        failure = e
    if commit.agreed(failure is not None):
        raise failure or KerasmeshError(
            kinds.CHECKPOINT_WRITE, f"Step {step} must be written completely.",
            x="Another process of the run failed to write it; its error "
              "says why.")
    return path


def write_step(directory: str, step: int, tree: dict, meta: dict) -> str:
    """Write, seal and swap in one step; on failure remove what was
    written (the steps saved before are unchanged)."""
    staging = commit.staging_path(directory, step)
    try:
        orbax().save_checkpointables(staging, {"pytree": tree},
                                     custom_metadata=meta)
        if process_index() == 0:
            commit.pause_point("written")
            write_marker(staging, step)
            commit.pause_point("sealed")
            return commit.swap_in(directory, step)
    except BaseException as e:
        if process_index() == 0:
            commit.recover(directory, only=step)
        code = disk_error(e)
        if code is not None:
            raise commit.write_error(directory, step,
                                     os.strerror(code)) from e
        raise
    return os.path.join(directory, str(step))


def disk_error(e: BaseException) -> int | None:
    """The errno of a write the file system refused (disk full, read-only,
    permissions), from Python or from TensorStore; None for other errors."""
    code = e.errno if isinstance(e, OSError) else None
    if code is None and isinstance(e, ValueError):
        found = _TENSORSTORE_OS_ERROR.search(str(e))
        code = int(found.group(1)) if found else None
    return code if code in _DISK_ERRORS else None


def current_step(model: Any) -> int:
    """The optimizer's iteration count (0 without an optimizer)."""
    opt = getattr(model, "optimizer", None)
    return int(opt.iterations.numpy()) if opt is not None and opt.built else 0


def save(model: Any, directory: Any, step: Any = None, keep: Any = None,
         overwrite: bool = False, epoch: Any = None) -> dict:
    """Save a model's variables and optimizer state as step `step`.

    Returns:
        `step`, `epoch`, `path` and the number of `variables` saved.
    """
    directory = check_directory(directory)
    step = check_step(step)
    step = check_step(current_step(model), False) if step is None else step
    return save_step(model, directory, step,
                     None if epoch is None else int(epoch), overwrite,
                     check_count(keep, "keep"))


# Restore -------------------------------------------------------------------

def saved_tree(path: str) -> Any:
    """The saved arrays' metadata (shape, dtype) as Orbax's tree."""
    return orbax().metadata(path, checkpointable_name="pytree").metadata


def warn_fallback(chosen: dict, passed: list[dict]) -> None:
    """Say that newer steps could not be used and which one is read."""
    if passed:
        warn(kinds.CHECKPOINT_FALLBACK,
             f"Restoring step {chosen['step']}, the newest complete step.",
             [("!", f"Step {s['step']} is not usable: {s['problem']}.")
              for s in passed[::-1]])


def restore(model: Any, directory: Any, step: Any = None) -> dict:
    """Restore a step (default: the newest complete one) into `model`.

    Variables are matched by group and path (see `match_key()`). Each is
    placed as its layout in `model` says, whatever the mesh and the number
    of processes of the run that saved it. Nothing is assigned until every
    array has been read. Without `step`, newer steps that are incomplete or
    damaged are passed over with a `checkpoint_fallback` warning.
    """
    directory = check_directory(directory)
    chosen, passed = pick_step(directory, check_step(step))
    build_optimizer(model)
    variables = {match_key(k): v for k, v in keyed_variables(model).items()}
    meta = saved_tree(chosen["path"])
    stored = flatten(meta)
    saved = {match_key(k): m for k, m in stored.items()}
    check_match(saved, variables)
    targets = {k: target_sharding(v) for k, v in variables.items()}
    check_capacity(saved, variables, targets)
    wanted = {k: match_key(k) for k in stored if match_key(k) in variables}
    loaded = flatten(orbax().load_checkpointables(
        chosen["path"],
        {"pytree": abstract_tree(meta, wanted, targets)})["pytree"])
    for key, value in loaded.items():
        if key in wanted:
            variables[wanted[key]].assign(value)
    warn_fallback(chosen, passed)
    own = kerasmesh_metadata(read_metadata(chosen["path"])) or {}
    return {"step": chosen["step"], "epoch": own.get("epoch"),
            "path": chosen["path"], "variables": len(variables)}


# Inspect -------------------------------------------------------------------

_COLUMNS = ("key", "group", "path", "shape", "dtype", "axes", "mesh_shape",
            "mesh_axes")


def step_variables(path: str) -> tuple[dict | None, list[dict]]:
    """kerasmesh's metadata of a step and its variables' rows (from Orbax's
    metadata when another tool wrote the step)."""
    own = kerasmesh_metadata(read_metadata(path))
    if own is not None and isinstance(own.get("variables"), list):
        return own, own["variables"]
    return own, [{"key": k, "group": k.partition("/")[0],
                  "path": k.partition("/")[2],
                  "shape": [int(s) for s in m.shape], "dtype": str(m.dtype),
                  "axes": None, "mesh_shape": None, "mesh_axes": None}
                 for k, m in flatten(saved_tree(path)).items()]


def info(directory: Any, step: Any = None) -> dict:
    """Steps of a checkpoint directory, and the variables of one step.

    Returns:
        `directory`; `steps` (columns `step`, `complete`, `problem`,
        `time`, seconds since the epoch, and `writer`: "kerasmesh",
        "orbax" for another tool such as Keras's `OrbaxCheckpoint`, or
        "unknown" for a folder that is no checkpoint step); `step`, the
        step described (the given one, else the newest complete one, else
        None) with its `epoch`, `process_count` and `variables` (columns
        `key`, `group`, `path`, `shape`, `dtype`, `axes`, `mesh_shape`,
        `mesh_axes`); `last_complete`, whether the newest step is complete.
    """
    directory = check_directory(directory)
    step = check_step(step)
    steps = scan(directory)
    if not steps:
        raise not_a_checkpoint(directory)
    out = {"directory": directory,
           "steps": {c: [s[c] for s in steps] for c in
                     ("step", "complete", "problem", "time", "writer")},
           "last_complete": steps[-1]["complete"],
           "step": None, "epoch": None, "process_count": None,
           "variables": None}
    if step is None and not any(s["complete"] for s in steps):
        return out
    chosen, _ = pick_step(directory, step)
    own, rows = step_variables(chosen["path"])
    out.update(step=chosen["step"], epoch=(own or {}).get("epoch"),
               process_count=(own or {}).get("process_count"),
               variables={c: [r.get(c) for r in rows] for c in _COLUMNS})
    return out

