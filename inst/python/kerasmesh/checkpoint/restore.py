"""Reading checkpoint steps back: restore into a model, and inspect.

A restore tries the newest step whose marker and file sizes are right (or
the step asked for), and checks its files' checksums while Orbax reads
them, in threads beside Orbax's own (`seal.verify()`): the files are read
twice, but at the same time, and nothing is assigned until both are done.
A step found damaged that way is passed over like an incomplete one (with
a `checkpoint_fallback` warning), or, asked for by number, is an error.
"""

from __future__ import annotations

import concurrent.futures
from typing import Any

from . import background as pending_saves
from .arguments import check_directory, check_step
from .files import (incomplete, kerasmesh_metadata, newest_first,
                    not_a_checkpoint, orbax, pick_step, read_metadata, scan)
from .seal import read_marker, verify
from .variables import (GROUPS, WEIGHTS, abstract_tree, build_optimizer,
                        check_capacity, check_match, flatten, keyed_variables,
                        match_key, target_sharding)
from .orbax_log import quiet_orbax
from ..core.errors import KerasmeshError, warn
from ..core import kinds


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


def restore(model: Any, directory: Any, step: Any = None,
            weights_only: bool = False, timeout: Any = None) -> dict:
    """Restore a step (default: the newest complete one) into `model`;
    with `weights_only`, its weights alone (not the optimizer's state).

    Variables are matched by group and path (see `match_key()`). Each is
    placed as its layout in `model` says, whatever the mesh and the number
    of processes of the run that saved it. Nothing is assigned until every
    array has been read and its file checked. Without `step`, newer steps
    that are incomplete or damaged are passed over with a
    `checkpoint_fallback` warning. A pending save of this process into
    `directory` is waited for first.
    """
    deadline = pending_saves.deadline_of(timeout)
    directory = check_directory(directory)
    step = check_step(step)
    pending_saves.wait(deadline, directory)
    groups = WEIGHTS if weights_only else GROUPS
    if not weights_only:
        build_optimizer(model)
    keyed = {k: v for k, v in keyed_variables(model).items()
             if k.partition("/")[0] in groups}
    variables = {match_key(k): v for k, v in keyed.items()}
    names = {match_key(k): k for k in keyed}
    passed = []
    for candidate in newest_first(directory, step):
        if candidate["complete"]:
            loaded, problem = pending_saves.bounded(
                lambda c=candidate: read_step(c, variables, groups, names),
                deadline, f"reading step {candidate['step']}")
            if problem is None:
                break
            candidate = dict(candidate, complete=False, problem=problem)
        passed.append(candidate)
    else:
        raise incomplete(step, passed)
    for key, value in loaded.items():
        variables[key].assign(value)
    warn_fallback(candidate, passed)
    own = kerasmesh_metadata(read_metadata(candidate["path"])) or {}
    return {"step": candidate["step"], "epoch": own.get("epoch"),
            "path": candidate["path"], "variables": len(variables)}


def read_step(chosen: dict, variables: dict, groups: Any = None,
              names: dict | None = None) -> tuple[dict, str | None]:
    """A step's arrays for `variables` (by match key), read by Orbax onto
    each variable's placement while its checksums are checked; with a
    damaged or unreadable step, ({}, its problem). A mismatch with the
    model is raised only when the step's files are intact (a damaged file
    explains it otherwise); any other error reading an intact step (Orbax
    can't read what is there) makes it unreadable."""
    path = chosen["path"]
    marker = read_marker(path, chosen["step"])
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        checked = pool.submit(verify, path, marker) \
            if marker is not None else None
        try:
            with quiet_orbax():
                loaded = load_arrays(path, variables, groups, names)
        except Exception as e:
            problem = checked.result() if checked is not None else None
            if problem is None and isinstance(e, KerasmeshError):
                raise
            return {}, problem or unreadable(e)
        problem = checked.result() if checked is not None else None
    return ({}, problem) if problem is not None else (loaded, None)


def unreadable(e: Exception) -> str:
    """The problem of a step whose files are intact but can't be read."""
    if isinstance(e, RecursionError):
        return "its metadata is nested too deeply to be read"
    first = str(e).strip().splitlines()[0] if str(e).strip() else ""
    return f"Orbax can't read it ({type(e).__name__}" + \
        (f": {first[:300]})" if first else ")")


def load_arrays(path: str, variables: dict, groups: Any = None,
                names: dict | None = None) -> dict:
    """The arrays of the step at `path` for `variables`, checked against
    them (for `groups`) and read onto their placements, by match key.
    `names`: the model's key of each match key, shown where the
    checkpoint has none."""
    meta = saved_tree(path)
    stored = flatten(meta)
    saved = {match_key(k): m for k, m in stored.items()}
    check_match(saved, variables, groups,
                {**(names or {}), **{match_key(k): k for k in stored}})
    targets = {k: target_sharding(v) for k, v in variables.items()}
    check_capacity(saved, variables, targets)
    wanted = {k: match_key(k) for k in stored if match_key(k) in variables}
    loaded = flatten(orbax().load_checkpointables(
        path, {"pytree": abstract_tree(meta, wanted, targets)})["pytree"])
    return {wanted[k]: v for k, v in loaded.items() if k in wanted}


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
        step described (the given one, else the newest complete one that
        can be read, else None) with its `epoch`, `process_count` and
        `variables` (columns `key`, `group`, `path`, `shape`, `dtype`,
        `axes`, `mesh_shape`, `mesh_axes`); `last_complete`, whether the
        newest step is complete. A step whose variables can't be read is
        not complete.

    Raises:
        KerasmeshError: `checkpoint_incomplete` for a `step` asked for
            that can't be read, and the errors of `pick_step()`.
    """
    directory = check_directory(directory)
    step = check_step(step)
    steps = scan(directory)
    if not steps:
        raise not_a_checkpoint(directory)
    if step is None:
        found = None
        for s in reversed([s for s in steps if s["complete"]]):
            found = readable_variables(s)
            if found is not None:
                break
            s.update(complete=False)
    else:
        chosen = pick_step(directory, step)[0]
        found = readable_variables(chosen)
        if found is None:
            raise incomplete(step, [chosen])
    out = {"directory": directory,
           "steps": {c: [s[c] for s in steps] for c in
                     ("step", "complete", "problem", "time", "writer")},
           "last_complete": steps[-1]["complete"],
           "step": None, "epoch": None, "process_count": None,
           "variables": None}
    if found is not None:
        chosen, own, rows = found
        out.update(step=chosen["step"], epoch=(own or {}).get("epoch"),
                   process_count=(own or {}).get("process_count"),
                   variables={c: [r.get(c) for r in rows]
                              for c in _COLUMNS})
    return out


def readable_variables(chosen: dict) -> tuple[dict, dict | None,
                                              list[dict]] | None:
    """(the step, kerasmesh's metadata, its variables' rows), or None
    when Orbax can't read its variables: `chosen` then says why (its
    `problem`)."""
    try:
        with quiet_orbax():
            own, rows = step_variables(chosen["path"])
    except KerasmeshError:
        raise
    except Exception as e:  # noqa: BLE001 - the step's problem, classed
        chosen["problem"] = unreadable(e)
        return None
    return chosen, own, rows
