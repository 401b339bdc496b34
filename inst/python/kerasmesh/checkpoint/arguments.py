"""What the checkpoint functions take, checked: the directory (a path to
read, or to write steps into, which must not lie in another checkpoint's
step), a step number and a count (`keep`, `every`)."""

from __future__ import annotations

import os
from typing import Any

from ..core.checks import is_whole
from ..core.errors import KerasmeshError
from ..core import kinds
from .files import MAX_STEP, OWN_DIR, STEP_DIR
from .seal import read_marker


def check_directory(directory: Any, writing: bool = False) -> str:
    """An absolute path from a non-empty string; one to write steps into
    (`writing`) must not lie in a step of another checkpoint directory,
    whose pruning would delete it.

    Raises:
        KerasmeshError: `argument` for anything else; `checkpoint_directory`
            when the path is a file, lies under one, or (`writing`) lies
            in a step.
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
            i="Pass the path of a directory, or of one to create."
            if writing else "Pass the path of a checkpoint directory.")
    step = enclosing_step(path) if writing else None
    if step is not None:
        raise KerasmeshError(
            kinds.CHECKPOINT_DIRECTORY,
            "`dir` must not lie in a step of another checkpoint directory.",
            x=f"{path} is in step {step[1]} of {os.path.dirname(step[0])}, "
              "which that directory's `keep` and `overwrite` would delete "
              "with it.",
            i="Save into a directory of its own, beside that one.")
    return path


def enclosing_step(path: str) -> tuple[str, int] | None:
    """The sealed kerasmesh step that is `path` or holds it, as its path
    and number, or None; through symbolic links too (`path`'s real
    place)."""
    for probe in dict.fromkeys([path, real_path(path)]):
        found = _enclosing_step(probe)
        if found is not None:
            return found
    return None


def real_path(path: str) -> str:
    """Where `path` is, symbolic links resolved, also for a path that
    does not exist yet (its nearest existing ancestor's)."""
    missing = []
    probe = path
    while not os.path.lexists(probe):
        parent = os.path.dirname(probe)
        if parent == probe:
            break
        missing.append(os.path.basename(probe))
        probe = parent
    return os.path.join(os.path.realpath(probe), *reversed(missing))


def _enclosing_step(path: str) -> tuple[str, int] | None:
    probe = path
    while True:
        match = STEP_DIR.match(os.path.basename(probe)) or \
            OWN_DIR.match(os.path.basename(probe))
        if match and not match.group("tmp") and os.path.isdir(probe) and \
                read_marker(probe, int(match.group("step"))) is not None:
            return probe, int(match.group("step"))
        parent = os.path.dirname(probe)
        if parent == probe:
            return None
        probe = parent


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
