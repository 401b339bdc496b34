"""Sharded checkpoints with Orbax: saving a step, in the background or not.

A checkpoint directory holds one subdirectory per step, written by Orbax
(`orbax.checkpoint.v1`, the library behind Keras's `OrbaxCheckpoint`):
every process writes the shards it holds. The state is laid out as Keras's
state tree (`{"pytree": ...}` with the trainable, non-trainable and
optimizer variables; metrics are not saved), so Keras's own
`model.load_weights(dir)` reads a kerasmesh checkpoint, and
`restore_checkpoint()` reads a directory Keras's `OrbaxCheckpoint` wrote.

kerasmesh adds the layout of every variable (mesh, axes per dimension),
the step and the epoch to Orbax's metadata of the step, and a marker with
every file's size and checksum once the step is committed. Which
directories are steps and whether each is intact is `files.py`'s topic,
the marker `seal.py`'s; how a step is committed, replaced and pruned
without losing one, `commit.py`'s; the lock, `lock.py`'s; the background
part of a save, `background.py`'s; reading a step back, `restore.py`'s.

A save, in order (each function a test may cut short):

1. in the caller's thread: wait for the pending save; take the lock
   (`lock.hold()`); check the target; `begin_write()`, Orbax copying the
   arrays off the devices and starting its write;
2. in the background (`background.py`): `finish_write()`, Orbax's write
   (uncompressed, see `write_options()`)
   and commit of the staging folder; `hash_files()`, each process its own
   files; process 0 checks that the directory is still the one it
   locked; the processes agree (`agree.py`); process 0 seals the step
   (`write_marker()`), swaps it in (`commit.retire()`,
   `commit.put_in_place()`) and prunes (`commit.prune()`); the lock is
   released.

A foreground save is the same, waited for.
"""

from __future__ import annotations

import errno
import os
import re
import time
from typing import Any

from . import agree, commit, lock
from . import background as pending_saves
from .arguments import check_count, check_directory, check_step
from .files import orbax
from .orbax_log import QUIET
from .seal import hash_files, write_marker
from .variables import (build_optimizer, describe_variables, keyed_variables,
                        nest)
from ..core.errors import KerasmeshError
from ..distributed.initialize import process_index
from ..core import kinds

_DISK_ERRORS = (errno.ENOSPC, errno.EDQUOT, errno.EROFS, errno.EACCES,
                errno.EPERM, errno.EIO, errno.EFBIG)
# How TensorStore (Orbax's array writer) reports an OS error: a ValueError
# such as "RESOURCE_EXHAUSTED: Failed writing: ...: No space left on
# device [os_error_code='28']".
_TENSORSTORE_OS_ERROR = re.compile(r"os_error_code='(\d+)'")

# After a failed write, Orbax's other writer threads may still be writing
# the step's other arrays, and TensorStore creates the folders it writes
# into: what a failed save left is removed until nothing has come back for
# SETTLE_S seconds, for CLEAN_UP_S seconds at most.
SETTLE_S = 0.5
CLEAN_UP_S = 10.0
# The paths in TensorStore's messages: "Error writing local file "/a/b"".
_QUOTED = re.compile(r"\"([^\"]+)\"")


def save(model: Any, directory: Any, step: Any = None, keep: Any = None,
         overwrite: bool = False, epoch: Any = None,
         background: bool = False, timeout: Any = None) -> dict:
    """Save a model's variables and optimizer state as step `step`; with
    `background`, return once the arrays are copied off the devices.

    Returns:
        `step`, `epoch`, `path`, the number of `variables` saved and
        `pending` (whether the save goes on in the background).
    """
    deadline = pending_saves.deadline_of(timeout)
    directory = check_directory(directory, writing=True)
    step = check_step(step)
    pending_saves.wait(deadline)  # one save at a time; raises its error
    step = check_step(current_step(model), False) if step is None else step
    return save_step(model, directory, step,
                     None if epoch is None else int(epoch), overwrite,
                     check_count(keep, "keep"), background=background,
                     deadline=deadline)


def wait(timeout: Any = None) -> dict | None:
    """Wait for this process's pending save; its result, or None.

    Raises:
        KerasmeshError: the save's `checkpoint_*` error; `timeout`.
    """
    return pending_saves.wait(pending_saves.deadline_of(timeout))


def save_step(model: Any, directory: str, step: int,
              epoch: int | None = None, overwrite: bool = False,
              keep: int | None = None, start: int | None = None,
              background: bool = False,
              deadline: float = float("inf")) -> dict:
    """Write one step, then prune; every process must call it. `keep`:
    keep the newest `keep` complete steps. `start`: also delete
    kerasmesh's steps after `start` (a run resumed from `start` replaces
    them). The caller waited for the pending save.

    Raises:
        KerasmeshError: `checkpoint_exists` when the step is complete and
            `overwrite` is False, or is not kerasmesh's; `checkpoint_write`
            when the file system refuses the write (disk full);
            `checkpoint_lock` when another writer holds the directory.
    """
    sync = getattr(model, "jax_state_sync", None)
    if sync is not None:
        sync()  # fit() keeps the state outside the variables between steps
    build_optimizer(model)  # so that a restore finds the slots it creates
    variables = keyed_variables(model)
    meta = {"kerasmesh": {
        "version": 1, "step": step, "epoch": epoch,
        "process_count": _process_count(),
        "variables": describe_variables(variables)}}
    tree = nest({k: v.value for k, v in variables.items()})
    commit.make_directory(directory)
    held = lock.hold(directory, deadline)
    plan = {"directory": directory, "step": step, "keep": keep,
            "start": start, "key": agree.next_key()}
    QUIET.hold()  # Orbax's log, until the save ends (finish_save())
    try:
        if check_target(directory, step, overwrite):  # overwrite: they go
            plan["start"] = step if start is None else min(start, step)
        response = begin_agreed(directory, step, tree, meta)
    except BaseException:
        held.release()
        QUIET.release()
        raise
    result = {"step": step, "epoch": epoch,
              "path": os.path.join(directory, str(step)),
              "variables": len(variables), "pending": background}
    pending_saves.start(
        directory, step, lambda: finish_save(held, response, plan, result))
    if background:
        return result
    return pending_saves.wait(deadline, directory) or result


def _process_count() -> int:
    import jax

    return int(jax.process_count())


def check_target(directory: str, step: int, overwrite: bool) -> list[int]:
    """Process 0 checks that `step` may be written and clears what a killed
    save left; every process raises when it refused. Returns the newer
    steps `overwrite` deletes (process 0's list; empty elsewhere)."""
    refusal, newer = None, []
    if process_index() == 0:
        try:
            commit.recover(directory)  # first: it may put a step back
            newer = commit.check_target(directory, step, overwrite)
        except KerasmeshError as e:
            refusal = e
    if commit.agreed(refusal is not None):
        raise refusal or KerasmeshError(
            kinds.CHECKPOINT_EXISTS, f"Step {step} must be one process 0 may "
            "write.", x="Process 0 refused to save it; its error says why.")
    return newer


def begin_agreed(directory: str, step: int, tree: dict, meta: dict) -> Any:
    """`begin_write()` in every process, raising in every process when one
    failed (before anything was committed)."""
    failure, response = None, None
    try:
        response = begin_write(commit.staging_path(directory, step), tree,
                               meta)
    except Exception as e:  # noqa: BLE001 - raised again below
        failure = e
    if commit.agreed(failure is not None):
        clean_up(directory, step)
        if failure is not None:
            raise classed(failure, directory, step) from failure
        raise KerasmeshError(
            kinds.CHECKPOINT_WRITE, f"Step {step} must be written completely.",
            x="Another process of the run failed to write it; its error "
              "says why.")
    return response


def begin_write(staging: str, tree: dict, meta: dict) -> Any:
    """Orbax creates `staging`'s folders, copies the arrays off the devices
    and starts writing them there (`write_options()`); its response tells
    when the write is committed."""
    ocp = orbax()
    with write_options(ocp):
        return ocp.save_checkpointables_async(staging, {"pytree": tree},
                                              custom_metadata=meta)


def write_options(ocp: Any) -> Any:
    """Orbax's context for kerasmesh's writes.

    Arrays are stored without compression. A training state's floats are
    nearly random bytes: zstd (Orbax's default) saves under a tenth of the
    space (8 % on a trained MLP's weights and Adam slots) for twice the CPU
    time of the write, time a background save takes from training and the
    next save may wait for. Orbax and Keras read either.

    The step's folders are created before `begin_write()` returns, not in
    Orbax's background: when their creation fails there (the directory
    moved away meanwhile), the save fails but Orbax's writer threads wait
    for a signal that never comes, for minutes after the save's error was
    raised, then fail and log into whatever the session does by then."""
    context = ocp.Context()
    context.array.saving.use_compression = False
    context.asynchronous.create_directories_asynchronously = False
    return context


def finish_write(response: Any) -> None:
    """Wait for Orbax's write (and its commit of the staging folder)."""
    response.result()


def finish_save(held: lock.HeldLock, response: Any, plan: dict,
                result: dict) -> dict:
    """A save's background part: the write, the seal, the swap, pruning;
    then the lock is released. On failure, process 0 removes what was
    written; the steps saved before are unchanged. A directory removed
    or moved meanwhile (its lock file is no longer the one held) fails
    the save, rather than sealing what was written into one recreated."""
    directory, step = plan["directory"], plan["step"]
    staging = commit.staging_path(directory, step)
    try:
        failure, record = None, {}
        try:
            finish_write(response)
            record = hash_files(staging, process_index(), _process_count())
        except Exception as e:  # noqa: BLE001 - agreed on, then raised
            failure = e
        failure = displaced(held, directory, step, failure) or failure
        agree.decide(plan["key"], failure, record,
                     lambda records: commit_step(plan, records, held))
    except BaseException as e:
        lost = displaced(held, directory, step, e) \
            if isinstance(e, Exception) else None
        clean_up(directory, step)
        if lost is not None and process_index() == 0:
            unmake_recreated(directory, step)
        raise (lost or classed(e, directory, step)) from e
    finally:
        held.release()
        QUIET.release()
    return dict(result, pending=False)


def commit_step(plan: dict, records: list[dict],
                held: lock.HeldLock | None = None) -> None:
    """Process 0: seal the step with every process's record, swap it in,
    prune; first, check that the directory is still the one locked."""
    directory, step = plan["directory"], plan["step"]
    lost = displaced(held, directory, step) if held is not None else None
    if lost is not None:
        raise lost
    files: dict = {}
    for record in records:
        files.update(record)
    write_marker(commit.staging_path(directory, step), step, files)
    commit.swap_in(directory, step)
    if plan["start"] is not None:  # first: `keep` counts this run's steps
        commit.remove_beyond(directory, plan["start"], step)
    commit.prune(directory, plan["keep"], step)


def displaced(held: lock.HeldLock, directory: str, step: int,
              failure: BaseException | None = None
              ) -> KerasmeshError | None:
    """`checkpoint_directory` when the directory was removed, moved or
    replaced while `step` was written: process 0, which holds the lock,
    can tell; after a `failure` of the write or the commit any process
    can tell from the step's folders and files, which kerasmesh never
    removes while it saves; None otherwise."""
    if held.lost():
        why = "its lock file is not the one the save holds"
    elif failure is not None and (commit.step_gone(directory, step) or
                                  vanished(failure, directory)):
        why = "the step's files vanished as it was written"
    else:
        return None
    return KerasmeshError(
        kinds.CHECKPOINT_DIRECTORY, "`dir` must stay in place while a step "
        "is saved.",
        x=f"{directory} was removed, moved or replaced while step {step} "
          f"was written ({why}).",
        i=f"Step {step} is not saved: save it again.")


def clean_up(directory: str, step: int) -> None:
    """Process 0 removes what a failed save of `step` left, and what
    Orbax's writer threads still add (`SETTLE_S`); a directory that
    vanished has nothing left to remove (the save's own error is what is
    raised)."""
    if process_index() != 0:
        return
    deadline = time.monotonic() + CLEAN_UP_S
    while time.monotonic() < deadline:
        try:
            commit.recover(directory, only=step)
            time.sleep(SETTLE_S)
            if step not in commit.leftovers(directory):
                return
        except OSError:
            if not os.path.isdir(directory):
                return  # it vanished: nothing left in it
            time.sleep(SETTLE_S)  # a writer changed what was removed


def unmake_recreated(directory: str, step: int) -> None:
    """A directory removed or moved during a save must not come back from
    it: Orbax's writer threads recreate the path they write to, even after
    the save failed. What they write there of `step` goes, and the
    directory with it once empty (never anything else in it), for as long
    as they may write: until it stays absent for three `SETTLE_S`, holds
    only what is not the save's, or `CLEAN_UP_S` passed."""
    deadline = time.monotonic() + CLEAN_UP_S
    absent = 0
    while time.monotonic() < deadline and absent < 3:
        if os.path.isdir(directory):
            absent = 0
            try:
                commit.recover(directory, only=step)
            except OSError:
                pass  # a writer changed what was removed: next round
            commit.remove_if_empty(directory)
            if os.path.isdir(directory) and \
                    step not in commit.leftovers(directory):
                return  # what it holds is not the save's
        else:
            absent += 1
        time.sleep(SETTLE_S)


def classed(e: BaseException, directory: str, step: int) -> BaseException:
    """A save's error as a `checkpoint_*` error: kerasmesh's own as it is,
    one the file system refused as `checkpoint_write` with the reason,
    any other error of a background save as `checkpoint_write` naming it.
    Interrupts stay what they are."""
    if isinstance(e, KerasmeshError) or not isinstance(e, Exception):
        return e
    code = disk_error(e)
    if code is not None:
        return commit.write_error(directory, step, os.strerror(code))
    return KerasmeshError(
        kinds.CHECKPOINT_WRITE, f"Step {step} must be written completely.",
        x=f"Writing into {directory} failed: {type(e).__name__}: {e}",
        i="The steps saved before are unchanged.")


def disk_error(e: BaseException,
               codes: tuple[int, ...] = _DISK_ERRORS) -> int | None:
    """The errno of a write the file system refused (`codes`: disk full,
    read-only, permissions, file too large), from Python or from
    TensorStore; None for other errors."""
    code = e.errno if isinstance(e, OSError) else None
    if code is None and isinstance(e, ValueError):
        found = _TENSORSTORE_OS_ERROR.search(str(e))
        code = int(found.group(1)) if found else None
    return code if code in codes else None


def vanished(e: BaseException, directory: str) -> bool:
    """Whether `e` is a file of `directory` not found that is still not
    there: a file kerasmesh was writing or reading, removed meanwhile."""
    if disk_error(e, (errno.ENOENT,)) is None:
        return False
    names = [e.filename, e.filename2] if isinstance(e, OSError) else \
        _QUOTED.findall(str(e))
    return any(isinstance(n, str) and n.startswith(directory + os.sep) and
               not os.path.lexists(n) for n in names)


def current_step(model: Any) -> int:
    """The optimizer's iteration count (0 without an optimizer)."""
    opt = getattr(model, "optimizer", None)
    return int(opt.iterations.numpy()) if opt is not None and opt.built else 0
