"""Committing, replacing and pruning steps: only kerasmesh's own steps are
ever deleted or replaced, a save killed anywhere leaves a complete step,
and two writers of one directory take turns."""

import errno
import glob
import multiprocessing
import os
import subprocess
import time

import numpy as np
import pytest

import checkpoint_workers as workers
from checkpoint_models import build, values
from kerasmesh.checkpoint import restore as cr
from kerasmesh.checkpoint import store as ck
from kerasmesh.checkpoint import commit as cc
from kerasmesh.checkpoint import files as cf
from kerasmesh.checkpoint import lock as cl
from kerasmesh.checkpoint import seal
from kerasmesh.core.errors import KerasmeshError
from test_checkpoint_files import committed_step, linked_step, orbax_step


def names(directory):
    return sorted(os.listdir(directory))


def steps_with_a_file(directory, steps, step, name, text):
    """Committed `steps`, then a file `name` written into step `step`
    after its seal (replacing a sealed file, or one put there since)."""
    for s in steps:
        committed_step(directory, s)
    with open(os.path.join(directory, str(step), name), "w") as f:
        f.write(text)


def user_folders(directory):
    """A user's numbered folders and another tool's step, none kerasmesh's."""
    for name in ("5", "123"):
        os.makedirs(os.path.join(directory, name))
        with open(os.path.join(directory, name, "data.csv"), "w") as f:
            f.write("mine")
    orbax_step(directory, 2)


# Pruning and replacing only what kerasmesh owns ----------------------------

def test_prune_deletes_only_kerasmesh_steps(tmp_path):
    d = str(tmp_path)
    user_folders(d)
    for step in (1, 3, 4):
        committed_step(d, step)
    assert cc.prune(d, 1, saved=4) == [1, 3]
    assert names(d) == ["123", "2", "4", "5"]
    assert os.path.exists(os.path.join(d, "5", "data.csv"))


def test_prune_never_deletes_the_step_just_saved_or_a_damaged_newest(
        tmp_path):
    d = str(tmp_path)
    # Step 9's array cut short: damaged, by its size.
    steps_with_a_file(d, (1, 3, 9), 9, "array", "99")
    # Saving step 3 with keep = 1: 9 is damaged, so 3 is the newest good
    # one; 1 goes, 9 (newer, kerasmesh's, damaged) stays for inspection.
    assert cc.prune(d, 1, saved=3) == [1]
    assert names(d) == ["3", "9"]
    committed_step(d, 12)
    # 12 is the newest good one now: 9 goes, 3 (just saved) stays.
    assert cc.prune(d, 1, saved=3) == [9]
    assert names(d) == ["12", "3"]


@pytest.mark.parametrize("background", [False, True])
def test_a_save_checksums_its_own_files_only(step_3, monkeypatch,
                                             background):
    """Pruning and a save's checks judge the older steps by their marker
    and file sizes: nothing of them is read again."""
    d, _ = step_3
    ck.save(build(seed=2), d, step=4)
    read, real = [], seal.file_digest

    def digest(path, *args, **kwargs):
        read.append(os.path.relpath(path, d).split(os.sep)[0])
        return real(path, *args, **kwargs)

    monkeypatch.setattr(seal, "file_digest", digest)
    ck.save(build(seed=3), d, step=5, keep=1, background=background)
    ck.wait()
    assert read and set(read) == {".kerasmesh-staging-5"}
    assert names(d) == [".kerasmesh.lock", "5"]


def test_nothing_is_deleted_through_a_symbolic_link(tmp_path):
    outside, d = linked_step(tmp_path, 1)
    committed_step(str(d), 4)
    assert cc.prune(str(d), 1, saved=4) == []
    cc.remove_tree(str(d), str(d / "1"))
    cc.remove_tree(str(d), str(outside / "1"))  # not inside `d`
    assert os.path.exists(outside / "1" / cf.FILE_LIST)
    with pytest.raises(KerasmeshError) as info:
        cc.check_target(str(d), 1, overwrite=True)
    assert info.value.kind == "checkpoint_exists"
    assert "symbolic link" in str(info.value)


def test_a_step_holding_files_put_there_since_is_never_deleted(tmp_path):
    d = str(tmp_path)
    for step in (1, 3):
        committed_step(d, step)
    nested = os.path.join(d, "1", "mine")
    os.makedirs(nested)
    with open(os.path.join(nested, "notes.txt"), "w") as f:
        f.write("mine")
    assert cc.prune(d, 1, saved=3) == []
    assert cc.remove_beyond(d, 0, saved=3) == []
    assert os.path.exists(os.path.join(nested, "notes.txt"))
    with pytest.raises(KerasmeshError) as info:
        cc.check_target(d, 1, overwrite=True)
    assert info.value.kind == "checkpoint_exists"
    assert "holds files it was not saved with (mine/notes.txt)" in \
        str(info.value)


def test_newer_steps_kerasmesh_may_not_delete_refuse_an_older_save(
        tmp_path):
    d = str(tmp_path)
    steps_with_a_file(d, (1, 2, 3), 2, "notes.txt", "mine")
    with pytest.raises(KerasmeshError) as info:
        cc.check_target(d, 0, overwrite=False)
    assert info.value.kind == "checkpoint_stale"
    assert "steps 1, 2 and 3" in str(info.value)
    assert "Move them away" in str(info.value)
    with pytest.raises(KerasmeshError) as info:
        cc.check_target(d, 0, overwrite=True)
    assert info.value.kind == "checkpoint_stale"
    assert "holds step 2, newer than 0, that kerasmesh may not delete" in \
        str(info.value)
    assert names(d) == ["1", "2", "3"]
    # Without it, overwrite deletes the newer steps as before.
    os.remove(os.path.join(d, "2", "notes.txt"))
    assert cc.check_target(d, 0, overwrite=True) == [1, 2, 3]


def test_a_link_named_for_another_step_says_whose_it_is(tmp_path):
    d = str(tmp_path / "ckpt")
    os.makedirs(d)
    committed_step(d, 1)
    other = str(tmp_path / "other")
    os.makedirs(other)
    os.symlink(os.path.join(d, "1"), os.path.join(other, "3"))
    [step] = cf.scan(other)
    assert not step["complete"]
    assert step["problem"] == "its file list (kerasmesh_files.json) is " \
        "step 1's: it is named 3 but holds step 1"


@pytest.mark.parametrize("overwrite", [True, False])
def test_saving_over_a_folder_kerasmesh_did_not_write_is_refused(
        tmp_path, overwrite):
    d = str(tmp_path)
    user_folders(d)
    for step in (5, 2):
        with pytest.raises(KerasmeshError) as info:
            cc.check_target(d, step, overwrite)
        assert info.value.kind == "checkpoint_exists"
        assert os.path.join(d, str(step)) in str(info.value)
        assert "not a step kerasmesh saved" in str(info.value)


def test_recover_finishes_a_half_done_swap_and_removes_leftovers(tmp_path):
    d = str(tmp_path)
    committed_step(d, 3)
    os.rename(tmp_path / "3", tmp_path / ".kerasmesh-staging-3")
    committed_step(d, 7)
    os.rename(tmp_path / "7", tmp_path / ".kerasmesh-retired-7")
    committed_step(d, 7)
    os.makedirs(tmp_path / ".kerasmesh-staging-8.orbax-checkpoint-tmp-1")
    cc.recover(d)
    assert names(d) == ["3", "7"]
    assert all(s["complete"] for s in cf.scan(d))


def test_recover_leaves_a_name_kerasmesh_never_writes(tmp_path):
    d = str(tmp_path)
    os.makedirs(tmp_path / ".kerasmesh-staging-003")
    cc.recover(d)
    assert os.path.isdir(tmp_path / ".kerasmesh-staging-003")


def test_a_directory_under_a_file_is_a_classed_error(tmp_path):
    afile = tmp_path / "afile"
    afile.write_text("x")
    with pytest.raises(KerasmeshError) as info:
        cc.make_directory(str(afile / "ckpt"))
    assert info.value.kind == "checkpoint_directory"
    assert str(afile) in str(info.value)


def test_a_directory_that_cant_be_created_names_the_path_and_why(
        tmp_path, monkeypatch):
    def refuse(path, exist_ok=False):
        raise PermissionError(errno.EACCES, "Permission denied", path)

    monkeypatch.setattr(cc.os, "makedirs", refuse)
    target = str(tmp_path / "locked" / "ckpt")
    with pytest.raises(KerasmeshError) as info:
        cc.make_directory(target)
    assert info.value.kind == "checkpoint_directory"
    assert f"{target} can't be created: Permission denied." in \
        str(info.value)


def test_a_link_named_as_a_leftover_is_unlinked_not_followed(tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "keep.txt").write_text("mine")
    d = tmp_path / "ckpt"
    d.mkdir()
    os.symlink(outside, d / ".kerasmesh-staging-3")
    cc.recover(str(d))
    assert names(str(d)) == []
    assert (outside / "keep.txt").read_text() == "mine"


def test_a_step_a_killed_swap_left_aside_is_not_overwritten_unasked(
        step_3):
    d, old = step_3
    os.rename(os.path.join(d, "3"), os.path.join(d, ".kerasmesh-retired-3"))
    with pytest.raises(KerasmeshError) as info:
        ck.save(build(seed=2), d, step=3)
    assert info.value.kind == "checkpoint_exists"
    assert names(d) == [".kerasmesh.lock", "3"]
    assert same(old, saved_values(d))


def test_a_directory_kerasmesh_cant_write_in_is_a_classed_error(
        tmp_path, monkeypatch):
    real_open = os.open

    def read_only(path, *args, **kwargs):
        if str(path).endswith(cl.LOCK_FILE):
            raise OSError(errno.EROFS, "Read-only file system", path)
        return real_open(path, *args, **kwargs)

    monkeypatch.setattr(cl.os, "open", read_only)
    with pytest.raises(KerasmeshError) as info:
        cl.hold(str(tmp_path), time.monotonic() + 5)
    assert info.value.kind == "checkpoint_write"
    assert "Read-only file system" in str(info.value)


def test_a_single_process_keeps_its_own_verdict():
    assert cc.agreed(True) is True and cc.agreed(False) is False


# Saves cut short -----------------------------------------------------------

@pytest.fixture()
def step_3(tmp_path, distribution):
    """A directory holding step 3 of a model, saved in this process."""
    distribution((2, 4))
    model = build(seed=1)
    ck.save(model, str(tmp_path), step=3)
    return str(tmp_path), values(model)


def saved_values(directory, step=None):
    fresh = build(seed=42)
    cr.restore(fresh, directory, step=step)
    return values(fresh)


def same(a, b):
    return all(np.array_equal(a[k], b[k]) for k in a)


def test_a_write_the_disk_refuses_leaves_nothing_and_the_old_step(
        step_3, monkeypatch):
    d, old = step_3

    def disk_full(path, step, files):
        with open(os.path.join(path, "partial"), "w") as f:
            f.write("x")
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(ck, "write_marker", disk_full)
    with pytest.raises(KerasmeshError) as info:
        ck.save(build(seed=2), d, step=3, overwrite=True)
    assert info.value.kind == "checkpoint_write"
    assert "No space left on device" in str(info.value)
    assert names(d) == [".kerasmesh.lock", "3"]
    assert not glob.glob(os.path.join(d, "*orbax-checkpoint-tmp*"))
    assert same(old, saved_values(d))


@pytest.fixture()
def tiny_disk(tmp_path):
    """A 2 MB tmpfs (root can mount one; elsewhere the test is skipped and
    the injected error above stands in)."""
    path = tmp_path / "tiny"
    path.mkdir()
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=2m",
                              "tmpfs", str(path)], capture_output=True)
    if mounted.returncode != 0:
        pytest.skip("can't mount a tmpfs here: "
                    f"{mounted.stderr.decode().strip()}")
    try:
        yield str(path)
    finally:
        subprocess.run(["umount", str(path)], check=True)


@pytest.mark.parametrize("background", [False, True])
def test_a_full_disk_is_a_classed_error_and_leaves_no_temporary_dir(
        tiny_disk, distribution, background):
    distribution((2, 4))
    model = build(seed=1)
    ck.save(model, tiny_disk, step=1)
    free = os.statvfs(tiny_disk)
    with open(os.path.join(tiny_disk, "filler"), "wb") as f:
        f.write(b"\0" * (free.f_bavail * free.f_frsize - 8192))
    with pytest.raises(KerasmeshError) as info:
        # In the background, the disk fills during the write: the error
        # comes where the save is waited for.
        ck.save(build(seed=2), tiny_disk, step=2, background=background)
        ck.wait()
    assert info.value.kind == "checkpoint_write"
    assert "No space left on device" in str(info.value)
    assert names(tiny_disk) == [".kerasmesh.lock", "1", "filler"]
    assert same(values(model), saved_values(tiny_disk))


@pytest.mark.parametrize("background", [False, True])
@pytest.mark.parametrize("point,survivor", [
    ("copying", "old"), ("copied", "old"), ("written", "old"),
    ("hashed", "old"), ("sealed", "old"), ("retired", "new"),
    ("swapped", "new"), ("pruned", "new")])
def test_a_save_killed_anywhere_leaves_a_complete_step(step_3, point,
                                                       survivor, background):
    d, old = step_3
    code = workers.run(workers.save_killed_at, d, 3, 2, point, background)
    assert code == -9  # SIGKILL, at that point
    new = values(build(seed=2))
    [step] = cf.scan(d)
    assert step["step"] == 3 and step["complete"], step
    assert same(old if survivor == "old" else new, saved_values(d, 3))
    # The next save finishes the swap and removes what was left over.
    ck.save(build(seed=4), d, step=4)
    assert names(d) == [".kerasmesh.lock", "3", "4"]
    assert same(old if survivor == "old" else new, saved_values(d, 3))


# Two writers at once -------------------------------------------------------

@pytest.mark.parametrize("overwrite", [False, True])
def test_two_processes_saving_the_same_steps_take_turns(tmp_path, overwrite):
    d, steps = str(tmp_path), [1, 2, 3, 4]
    ctx = multiprocessing.get_context("spawn")
    barrier, results = ctx.Barrier(2), ctx.Queue()
    procs = [ctx.Process(target=workers.save_racing,
                         args=(d, steps, seed, overwrite, barrier, results))
             for seed in (1, 2)]
    for p in procs:
        p.start()
    try:
        got = [results.get(timeout=240) for _ in range(2 * len(steps))]
    finally:
        for p in procs:
            p.join(30)
            if p.is_alive():
                p.kill()
    expected = ["ok", "ok"] if overwrite else ["checkpoint_exists", "ok"]
    for step in steps:
        outcomes = sorted(o for _, s, o in got if s == step)
        assert outcomes == expected, (step, got)
    scan = cf.scan(d)
    assert [s["step"] for s in scan] == steps
    assert all(s["complete"] and s["owned"] for s in scan)
    assert names(d) == [".kerasmesh.lock"] + [str(s) for s in steps]
