"""Committing, replacing and pruning steps, without ever losing one.

A save holds the directory's lock (`lock.py`; process 0 of a run takes it
for the run, until the save's background part ends), so that two writers
of one directory take turns. The new step is written aside, into
`.kerasmesh-staging-N` (Orbax writes there through its own temporary
directory and renames it when every process has written its shards), and
sealed with its marker (`seal.write_marker()`). Then it is swapped in:

1. `N` (the old step, when overwriting) is renamed `.kerasmesh-retired-N`
   (`retire()`);
2. `.kerasmesh-staging-N` is renamed `N` (`put_in_place()`);
3. `.kerasmesh-retired-N` is deleted.

A process killed anywhere leaves the old or the new step complete: before
step 2 the sealed staging copy, after it `N`, stands for the step
(`files.step_dirs()`), and the next save finishes the swap and
removes what is left over (`recover()`). Only steps kerasmesh committed
(`owned`: sealed, holding no file put there since) are ever renamed or
deleted, and never through a symbolic link.
"""

from __future__ import annotations

import os
import re
import shutil

from .arguments import file_in_the_way
from .files import (RETIRED, STAGING, STEP_NUMBER, describe_step,
                    foreign_files, scan)
from .seal import read_marker
from ..core.errors import KerasmeshError
from ..core import kinds
from ..core.text import listing, noun

_LEFTOVER = re.compile(r"^\.kerasmesh-(staging|retired)-" + STEP_NUMBER +
                       r"(\.orbax-checkpoint-tmp.*)?$")


# The directory -------------------------------------------------------------

def make_directory(directory: str) -> None:
    """Create the checkpoint directory (and its parents).

    Raises:
        KerasmeshError: `checkpoint_directory`, naming the path and why.
    """
    try:
        os.makedirs(directory, exist_ok=True)
    except OSError as e:
        blocker = file_in_the_way(directory)
        why = f"{blocker} is a file" if blocker else \
            (e.strerror or str(e))
        raise KerasmeshError(
            kinds.CHECKPOINT_DIRECTORY, "`dir` must be a directory kerasmesh "
            "can create.", x=f"{directory} can't be created: {why}.",
            i="Pass a directory you can write to.") from e


def remove_if_empty(directory: str) -> None:
    """Remove `directory` if it holds nothing (never anything in it)."""
    try:
        if not os.listdir(directory):
            os.rmdir(directory)
    except OSError:
        pass  # gone already, or holding something: left as it is


def agreed(refused: bool) -> bool:
    """Whether any process of the run refused (or failed) a step of a
    save, for every process, so that none waits at a barrier for a save
    another gave up. A collective: the main thread only."""
    import jax

    if jax.process_count() == 1:
        return refused
    import numpy as np
    from jax.experimental import multihost_utils

    flags = multihost_utils.process_allgather(np.int32(1 if refused else 0))
    return bool(np.any(flags))


# Deleting and renaming only what kerasmesh owns --------------------------

def remove_tree(directory: str, path: str) -> None:
    """Delete a directory of `directory`, never through a symbolic link and
    never outside `directory`."""
    if os.path.islink(path) or not os.path.isdir(path):
        return
    parent = os.path.realpath(os.path.dirname(path))
    if parent != os.path.realpath(directory):
        return
    shutil.rmtree(path)


def leftovers(directory: str) -> dict[int, list[str]]:
    """kerasmesh's temporary entries, by step."""
    out: dict[int, list[str]] = {}
    for name in os.listdir(directory):
        match = _LEFTOVER.match(name)
        if match:
            out.setdefault(int(match.group("step")), []).append(
                os.path.join(directory, name))
    return out


def recover(directory: str, only: int | None = None) -> None:
    """Finish the swaps a killed save left half done, and delete the rest
    of its temporary entries (all steps, or step `only`)."""
    for step, paths in leftovers(directory).items():
        if only is not None and step != only:
            continue
        final = os.path.join(directory, str(step))
        if not os.path.lexists(final):
            for kind in (STAGING, RETIRED):
                path = os.path.join(directory, f"{kind}{step}")
                if os.path.isdir(path) and not os.path.islink(path) and \
                        read_marker(path, step) is not None:
                    os.rename(path, final)
                    break
        for path in paths:
            if os.path.islink(path):
                os.unlink(path)  # the link, never what it points to
            else:
                remove_tree(directory, path)


def staging_path(directory: str, step: int) -> str:
    return os.path.join(directory, f"{STAGING}{step}")


def step_gone(directory: str, step: int) -> bool:
    """Whether the step being saved is gone in every form it takes during
    a save (Orbax's temporary folder, the staging folder it renames it to,
    the step in its place): what a save finds when its directory was
    removed while it wrote."""
    staging = os.path.basename(staging_path(directory, step))
    try:
        names = os.listdir(directory)
    except OSError:
        return True
    return not any(n == str(step) or n == staging or
                   n.startswith(staging + ".orbax-checkpoint-tmp")
                   for n in names)


def swap_in(directory: str, step: int) -> str:
    """Put the sealed staging copy of `step` in its place; the old step
    (kerasmesh's: `check_target()` made sure) goes only after."""
    final = os.path.join(directory, str(step))
    if os.path.lexists(final):
        retire(directory, step)
    put_in_place(directory, step)
    remove_tree(directory, os.path.join(directory, f"{RETIRED}{step}"))
    return final


def retire(directory: str, step: int) -> None:
    """Swap, first rename: the old step `N` becomes `.kerasmesh-retired-N`."""
    os.rename(os.path.join(directory, str(step)),
              os.path.join(directory, f"{RETIRED}{step}"))


def put_in_place(directory: str, step: int) -> None:
    """Swap, second rename: `.kerasmesh-staging-N` becomes `N`."""
    os.rename(staging_path(directory, step),
              os.path.join(directory, str(step)))


# What a save may replace -------------------------------------------------

def check_target(directory: str, step: int, overwrite: bool) -> list[int]:
    """Whether `step` may be written: it is new, or kerasmesh's own and
    `overwrite` is set; and no complete step kerasmesh saved is newer (a
    restore would read it), unless `overwrite` is set and kerasmesh may
    delete them all (then the save deletes them). Returns the newer
    steps.

    Raises:
        KerasmeshError: `checkpoint_exists`, naming the path;
            `checkpoint_stale`, naming the newer steps.
    """
    check_step_folder(directory, step, overwrite)
    newer = [s for s in scan(directory, deep=False)
             if s["writer"] == "kerasmesh" and s["complete"] and
             s["step"] > step]
    if not newer:
        return []
    steps = listing([s["step"] for s in newer], quote=False)
    kept = [s["step"] for s in newer if not s["owned"]]
    if overwrite and not kept:
        return [s["step"] for s in newer]
    if overwrite:  # some can't be deleted: those are the problem
        shown = listing(kept, quote=False)
        them = "it" if len(kept) == 1 else "them"
        why = f"{directory} holds {noun(len(kept), 'step')} {shown}, newer " \
            f"than {step}, that kerasmesh may not delete (holding files " \
            "added since it was saved, or a symbolic link): a restore " \
            f"would read {them}, not step {step}."
    else:
        why = f"{directory} holds {noun(len(newer), 'step')} {steps}, " \
            f"newer than {step}: left by a run that went further, if " \
            "this one resumed from an earlier step. Saved beside them, " \
            f"step {step} would not be the step a restore reads, and " \
            "`keep` would prune it first."
    raise KerasmeshError(
        kinds.CHECKPOINT_STALE, f"Step {step} must be newer than the steps "
        "saved in `dir`.", x=why,
        i="Move them away, or save into another directory." if kept else
          f"Pass `overwrite = TRUE` to save step {step} and delete "
          f"{noun(len(newer), 'step')} {steps}, or save into another "
          "directory.")


def check_step_folder(directory: str, step: int, overwrite: bool) -> None:
    """Whether `step`'s own folder may be written: it is new, or
    kerasmesh's own and `overwrite` is set.

    Raises:
        KerasmeshError: `checkpoint_exists`, naming the path.
    """
    path = os.path.join(directory, str(step))
    if not os.path.lexists(path):
        return
    found = describe_step({"step": step, "path": path, "committed": True,
                           "link": os.path.islink(path)}, deep=False) \
        if os.path.isdir(path) else {"owned": False, "complete": False}
    if not found["owned"]:
        marker = read_marker(path, step)
        added = foreign_files(path, marker) if marker is not None else []
        what = "a symbolic link" if os.path.islink(path) else \
            f"a step that holds files it was not saved with " \
            f"({listing(added, quote=False)})" if added else \
            "not a step kerasmesh saved"
        raise KerasmeshError(
            kinds.CHECKPOINT_EXISTS, f"Step {step} must not be in the way.",
            x=f"{path} is {what}; kerasmesh replaces only its own steps.",
            i="Move it away, or save into another directory.")
    if found["complete"] and not overwrite:
        raise KerasmeshError(
            kinds.CHECKPOINT_EXISTS, f"Step {step} must not be saved already.",
            x=f"{path} holds step {step}, saved by kerasmesh.",
            i="Pass `overwrite = TRUE` to replace it, or another `step`.")


def write_error(directory: str, step: int, why: str) -> KerasmeshError:
    """A classed error for a save the file system refused (disk full); a
    `step` below 0 for one refused before any step was chosen."""
    what = f"Step {step}" if step >= 0 else "A checkpoint step"
    return KerasmeshError(
        kinds.CHECKPOINT_WRITE, f"{what} must be written completely.",
        x=f"Writing into {directory} failed: {why}.",
        i="Free some space (or fix the permissions) and save again; the "
          "steps saved before are unchanged.")


# Pruning ---------------------------------------------------------------------

def prune(directory: str, keep: int | None, saved: int) -> list[int]:
    """Delete kerasmesh's steps older than the newest `keep` complete ones
    (newest first; complete by marker and file sizes: nothing is
    re-hashed); never the step just `saved`, whose checksums were taken
    as it was written, never a step kerasmesh did not commit. Returns the
    steps deleted."""
    if keep is None:
        return []
    owned = [s for s in scan(directory, deep=False) if s["owned"]]
    kept = []
    for s in reversed(owned):
        if len(kept) == keep:
            break
        if s["step"] == saved or s["complete"]:
            kept.append(s["step"])
    if len(kept) < keep:
        return []
    doomed = [s for s in owned if s["step"] < min(kept) and
              s["step"] != saved]
    for s in doomed:
        remove_tree(directory, s["path"])
    return [s["step"] for s in doomed]


def remove_beyond(directory: str, start: int, saved: int) -> list[int]:
    """Delete kerasmesh's steps after `start` other than `saved`: what a
    run restored from step `start` replaces. Returns the steps deleted."""
    doomed = [s for s in scan(directory, deep=False) if s["owned"] and
              s["step"] > start and s["step"] != saved]
    for s in doomed:
        remove_tree(directory, s["path"])
    return [s["step"] for s in doomed]
