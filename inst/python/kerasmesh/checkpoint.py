"""Sharded checkpoints with Orbax: save, restore onto any mesh, inspect.

A checkpoint directory holds one subdirectory per step, written by Orbax
(`orbax.checkpoint.v1`, the library behind Keras's `OrbaxCheckpoint`):
every process writes the shards it holds, into a temporary directory that
Orbax renames to the step's number once every process has finished. The
state is laid out as Keras's state tree (`{"pytree": ...}` with the
trainable, non-trainable and optimizer variables; metrics are not saved).

kerasmesh adds two things:

* the layout of every variable (mesh, axes per dimension), the step and the
  epoch, in the step's Orbax metadata (written atomically with the step);
* a file list, `kerasmesh_files.json`, written by process 0 after Orbax
  committed the step. A step is complete when Orbax committed it and every
  file of the list is there with its size; a step whose list is missing
  (the writer died right after the commit) counts as incomplete, so a
  restore falls back to the step before.

The callback for `fit()` lives in `checkpoint_callback.py`.
"""

from __future__ import annotations

import math
import os
from typing import Any

from .checkpoint_files import (check_directory, kerasmesh_metadata,
                               not_a_checkpoint, orbax, pick_step,
                               process_index, read_metadata, scan,
                               sync_processes, write_file_list)
from .errors import KerasmeshError

GROUPS = ("trainable_variables", "non_trainable_variables",
          "optimizer_variables")


# Variables and layouts -----------------------------------------------------

def model_variables(model: Any) -> dict[str, Any]:
    """The model's variables by key "group/path", in GROUPS order.

    Raises:
        KerasmeshError: `checkpoint_model` when the model has no variables.
    """
    if not getattr(model, "variables", None):
        raise KerasmeshError(
            "checkpoint_model", "The model must be built.",
            x="It has no variables yet.",
            i="Give it an `Input()`, or call it on data once.")
    groups = {"trainable_variables": model.trainable_variables,
              "non_trainable_variables": model.non_trainable_variables}
    opt = getattr(model, "optimizer", None)
    if opt is not None:
        groups["optimizer_variables"] = opt.variables
    out = {}
    for group in GROUPS:
        for v in groups.get(group, []):
            out[f"{group}/{v.path}"] = v
    return out


def build_optimizer(model: Any) -> None:
    """Create the optimizer's slots (under the current distribution, they
    take their variable's layout), as the first training step would."""
    opt = getattr(model, "optimizer", None)
    if opt is not None and not opt.built:
        opt.build(model.trainable_variables)


def nest(flat: dict[str, Any]) -> dict:
    """{"a/b/c": x} as {"a": {"b": {"c": x}}}."""
    out: dict = {}
    for key, value in flat.items():
        parts = key.split("/")
        node = out
        for part in parts[:-1]:
            node = node.setdefault(part, {})
        node[parts[-1]] = value
    return out


def flatten(tree: Any, prefix: str = "") -> dict[str, Any]:
    """The inverse of `nest()`."""
    if not isinstance(tree, dict):
        return {prefix.rstrip("/"): tree}
    out = {}
    for key, value in tree.items():
        out.update(flatten(value, f"{prefix}{key}/"))
    return out


def describe_layout(sharding: Any, rank: int) -> dict:
    """Mesh and axes per dimension of a placed array's sharding."""
    from .sharding import spec_entries

    mesh = getattr(sharding, "mesh", None)
    if mesh is None or not hasattr(sharding, "spec"):
        return {"axes": [None] * rank, "mesh_shape": None, "mesh_axes": None}
    axes = [list(e) if isinstance(e, (tuple, list)) else e
            for e in spec_entries(sharding, rank)]
    return {"axes": axes,
            "mesh_shape": [int(s) for s in mesh.devices.shape],
            "mesh_axes": [str(a) for a in mesh.axis_names]}


def describe_variables(variables: dict[str, Any]) -> list[dict]:
    out = []
    for key, v in variables.items():
        group, _, path = key.partition("/")
        shape = [int(s) for s in v.shape]
        out.append(dict({"key": key, "group": group, "path": path,
                         "shape": shape, "dtype": str(v.dtype)},
                        **describe_layout(v.value.sharding, len(shape))))
    return out


def split_ways(sharding: Any, rank: int) -> list[int]:
    """How many ways each dimension is split under a sharding."""
    mesh = getattr(sharding, "mesh", None)
    if mesh is None or not hasattr(sharding, "spec"):
        return [1] * rank
    sizes = dict(zip(mesh.axis_names, mesh.devices.shape))
    from .sharding import spec_entries

    out = []
    for entry in spec_entries(sharding, rank):
        names = entry if isinstance(entry, (tuple, list)) else \
            ([entry] if entry else [])
        out.append(math.prod(int(sizes[n]) for n in names))
    return out


# Save ----------------------------------------------------------------------

def new_checkpointer(directory: str, keep: int | None = None) -> Any:
    """An Orbax Checkpointer keeping the last `keep` steps (None: all)."""
    ocp = orbax()
    policy = None
    if keep is not None:
        policy = ocp.training.preservation_policies.LatestN(int(keep))
    return ocp.training.Checkpointer(
        directory, preservation_policy=policy,
        save_decision_policy=ocp.training.save_decision_policies
        .FixedIntervalPolicy(1),
        cleanup_tmp_directories=True)


def save_step(checkpointer: Any, model: Any, directory: str, step: int,
              epoch: int | None = None, overwrite: bool = False) -> dict:
    """Write one step with `checkpointer`; every process must call it.

    Raises:
        KerasmeshError: `checkpoint_exists` when the step is complete and
            `overwrite` is False.
    """
    import jax

    sync = getattr(model, "jax_state_sync", None)
    if sync is not None:
        sync()  # fit() keeps the state outside the variables between steps
    build_optimizer(model)  # so that a restore finds the slots it creates
    variables = model_variables(model)
    existing = [s for s in scan(directory) if s["step"] == step]
    if existing and existing[-1]["complete"] and not overwrite:
        raise KerasmeshError(
            "checkpoint_exists", f"Step {step} must not be saved already.",
            x=f"{existing[-1]['path']} holds a complete step {step}.",
            i="Pass `overwrite = TRUE` to replace it, or another "
              "`step`.")
    meta = {"kerasmesh": {
        "version": 1, "step": step, "epoch": epoch,
        "process_count": int(jax.process_count()),
        "variables": describe_variables(variables)}}
    tree = nest({k: v.value for k, v in variables.items()})
    checkpointer.save_checkpointables(
        step, {"pytree": tree}, force=True, overwrite=True,
        custom_metadata=meta)
    path = os.path.join(directory, str(step))
    if process_index() == 0:
        write_file_list(path)
    sync_processes(f"kerasmesh_checkpoint_{step}")
    return {"step": step, "epoch": epoch, "path": path,
            "variables": len(variables)}


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
    step = current_step(model) if step is None else int(step)
    checkpointer = new_checkpointer(directory, keep)
    try:
        return save_step(checkpointer, model, directory, step,
                         None if epoch is None else int(epoch), overwrite)
    finally:
        checkpointer.close()


# Restore -------------------------------------------------------------------

def saved_arrays(path: str) -> dict[str, Any]:
    """Shape and dtype of each saved array, by key "group/path"."""
    ocp = orbax()
    meta = ocp.metadata(path, checkpointable_name="pytree").metadata
    return flatten(meta)


def mismatch(kind: str, message: str, bullets: list) -> KerasmeshError:
    return KerasmeshError(kind, message, bullets + [
        ("i", "Build the model as it was built for the checkpoint (the same "
              "layers, names and sizes), then restore.")])


def check_match(saved: dict, variables: dict) -> None:
    """Same names and shapes in the checkpoint and the model.

    Raises:
        KerasmeshError: `checkpoint_variables` (names differ) or
            `checkpoint_shape` (a shape differs), naming the variable.
    """
    for key, v in variables.items():
        if key not in saved:
            continue
        shape = tuple(int(s) for s in saved[key].shape)
        if shape != tuple(int(s) for s in v.shape):
            raise mismatch(
                "checkpoint_shape", f"Variable \"{key}\" must have the "
                "shape it was saved with.",
                [("x", f"Saved {_shape(shape)}; the model's is "
                       f"{_shape(v.shape)}.")])
    groups = {k.partition("/")[0] for k in variables}
    wanted = {k for k in saved if k.partition("/")[0] in groups}
    missing = [k for k in variables if k not in saved]
    extra = sorted(wanted - set(variables))
    if missing or extra:
        bullets = []
        if missing:
            bullets.append(("x", f"The checkpoint has no variable "
                                 f"\"{missing[0]}\"" +
                                 (f" (and {len(missing) - 1} more)."
                                  if len(missing) > 1 else ".")))
        if extra:
            bullets.append(("x", f"The model has no variable "
                                 f"\"{extra[0]}\"" +
                                 (f" (and {len(extra) - 1} more)."
                                  if len(extra) > 1 else ".")))
        raise mismatch("checkpoint_variables", "The checkpoint's variables "
                       "must match the model's.", bullets)


def _shape(shape) -> str:
    return "(" + ", ".join(str(int(s)) for s in shape) + ")"


def target_sharding(v: Any) -> Any:
    """Where a variable goes: its layout, else where it lives now."""
    layout = getattr(v, "_layout", None)
    backend_layout = getattr(layout, "backend_layout", layout)
    if backend_layout is not None and hasattr(backend_layout, "spec"):
        return backend_layout
    return v.value.sharding


def check_capacity(saved: dict, variables: dict, targets: dict) -> None:
    """Every saved shape divides evenly over its target layout.

    Raises:
        KerasmeshError: `checkpoint_layout`, naming the variable.
    """
    for key in variables:
        shape = [int(s) for s in saved[key].shape]
        ways = split_ways(targets[key], len(shape))
        for dim, (n, w) in enumerate(zip(shape, ways)):
            if n % w:
                raise KerasmeshError(
                    "checkpoint_layout", f"Variable \"{key}\" must fit the "
                    "mesh it is restored onto.",
                    x=f"Dimension {dim + 1} ({n}) can't be split "
                      f"{w} ways.",
                    i="Restore onto a mesh whose axes divide the "
                      "saved shapes.")


def match_key(key: str) -> str:
    """The key variables are matched by: optimizer variables without the
    optimizer's name, which Keras makes unique per session ("adam_1")."""
    group, _, path = key.partition("/")
    if group == "optimizer_variables":
        path = path.partition("/")[2] or path
    return f"{group}/{path}"


def restore(model: Any, directory: Any, step: Any = None) -> dict:
    """Restore a step (default: the newest complete one) into `model`.

    Variables are matched by group and path (see `match_key()`). Each is
    placed as its layout in `model` says, whatever the mesh and the number
    of processes of the run that saved it. Nothing is assigned until every
    array has been read.
    """
    directory = check_directory(directory)
    chosen = pick_step(directory, None if step is None else int(step))
    build_optimizer(model)
    variables = {match_key(k): v for k, v in model_variables(model).items()}
    stored = saved_arrays(chosen["path"])
    saved = {match_key(k): m for k, m in stored.items()}
    check_match(saved, variables)
    targets = {k: target_sharding(v) for k, v in variables.items()}
    check_capacity(saved, variables, targets)

    import jax

    ocp = orbax()
    abstract = {}
    for key, meta in stored.items():
        wanted = match_key(key)
        if wanted in variables:
            abstract[key] = jax.ShapeDtypeStruct(
                tuple(meta.shape), meta.dtype, sharding=targets[wanted])
        else:
            abstract[key] = ocp.PLACEHOLDER
    loaded = flatten(ocp.load_checkpointables(
        chosen["path"], {"pytree": nest(abstract)})["pytree"])
    for key, value in loaded.items():
        if match_key(key) in variables:
            variables[match_key(key)].assign(value)
    own = kerasmesh_metadata(read_metadata(chosen["path"])) or {}
    return {"step": chosen["step"], "epoch": own.get("epoch"),
            "path": chosen["path"], "variables": len(variables)}


# Inspect -------------------------------------------------------------------

def info(directory: Any, step: Any = None) -> dict:
    """Steps of a checkpoint directory, and the variables of one step.

    Returns:
        `directory`; `steps` (columns `step`, `complete`, `problem`,
        `time`, seconds since the epoch); `step`, the step described (the
        given one, else the newest complete one, else None) with its
        `epoch`, `process_count` and `variables` (columns `key`, `group`,
        `path`, `shape`, `dtype`, `axes`, `mesh_shape`, `mesh_axes`);
        `last_complete`, whether the newest step is complete.
    """
    directory = check_directory(directory)
    steps = scan(directory)
    if not steps:
        raise not_a_checkpoint(directory)
    times = []
    for s in steps:
        meta = read_metadata(s["path"]) or {}
        stamp = meta.get("commit_timestamp_nsecs")
        times.append(None if stamp is None else stamp / 1e9)
    out = {"directory": directory,
           "steps": {"step": [s["step"] for s in steps],
                     "complete": [s["complete"] for s in steps],
                     "problem": [s["problem"] for s in steps],
                     "time": times},
           "last_complete": steps[-1]["complete"],
           "step": None, "epoch": None, "process_count": None,
           "variables": None}
    complete = [s for s in steps if s["complete"]]
    if step is None and not complete:
        return out
    chosen = pick_step(directory, None if step is None else int(step))
    own = kerasmesh_metadata(read_metadata(chosen["path"]))
    if own is not None:
        rows = own["variables"]
    else:
        rows = [{"key": k, "group": k.partition("/")[0],
                 "path": k.partition("/")[2],
                 "shape": [int(s) for s in m.shape], "dtype": str(m.dtype),
                 "axes": None, "mesh_shape": None, "mesh_axes": None}
                for k, m in saved_arrays(chosen["path"]).items()]
    columns = ("key", "group", "path", "shape", "dtype", "axes",
               "mesh_shape", "mesh_axes")
    out.update(step=chosen["step"], epoch=(own or {}).get("epoch"),
               process_count=(own or {}).get("process_count"),
               variables={c: [r.get(c) for r in rows] for c in columns})
    return out
