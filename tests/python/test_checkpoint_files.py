"""A checkpoint directory's steps: which are complete, and why not."""

import json
import os

import pytest

from kerasmesh.checkpoint import files as cf
from kerasmesh.checkpoint import seal
from kerasmesh.core.errors import KerasmeshError


def committed_step(directory, step, files=None):
    """A step directory as a finished kerasmesh save leaves it."""
    path = os.path.join(directory, str(step))
    os.makedirs(path)
    meta = {"commit_timestamp_nsecs": 1,
            "custom_metadata": {"kerasmesh": {"step": step}}}
    with open(os.path.join(path, "_CHECKPOINT_METADATA"), "w") as f:
        json.dump(meta, f)
    for name, text in (files or {"array": "0123"}).items():
        with open(os.path.join(path, name), "w") as f:
            f.write(text)
    seal.write_marker(path, step, seal.hash_files(path))
    return path


def test_steps_are_ordered_by_number_with_unfinished_ones_marked(tmp_path):
    for name in ["10", "9", "11.orbax-checkpoint-tmp-123", "notes"]:
        os.makedirs(tmp_path / name)
    steps = cf.step_dirs(str(tmp_path))
    assert [(s["step"], s["committed"]) for s in steps] == \
        [(9, True), (10, True), (11, False)]
    assert cf.step_dirs(str(tmp_path / "missing")) == []


def test_a_number_with_leading_zeros_is_no_step(tmp_path):
    committed_step(str(tmp_path), 10)
    for name in ["00010", "010.orbax-checkpoint-tmp-1",
                 ".kerasmesh-staging-0010"]:
        os.makedirs(tmp_path / name)
    assert [(s["step"], os.path.basename(s["path"]))
            for s in cf.step_dirs(str(tmp_path))] == [(10, "10")]
    assert [s["step"] for s in cf.scan(str(tmp_path))] == [10]


def test_a_directory_of_folders_with_leading_zeros_says_why(tmp_path):
    os.makedirs(tmp_path / "0001")
    error = cf.not_a_checkpoint(str(tmp_path))
    assert "has no step directories" in error.args[0]
    assert "0001 is not a step" in error.args[0]
    for name in ["0002", "0003", "0004"]:
        os.makedirs(tmp_path / name)
    assert "0001, 0002, 0003 ... are not steps" in \
        cf.not_a_checkpoint(str(tmp_path)).args[0]
    assert "leading" not in cf.not_a_checkpoint(
        str(tmp_path / "missing")).args[0]


def test_a_complete_step_has_no_problem(tmp_path):
    committed_step(str(tmp_path), 4)
    [step] = cf.scan(str(tmp_path))
    assert step["complete"] and step["problem"] is None


def test_a_step_without_orbax_commit_is_incomplete(tmp_path):
    os.makedirs(tmp_path / "4")
    [step] = cf.scan(str(tmp_path))
    assert step["problem"] == "Orbax's commit record is missing"


def test_a_file_cut_short_is_found_by_its_size(tmp_path):
    path = committed_step(str(tmp_path), 4, {"array": "0123"})
    with open(os.path.join(path, "array"), "w") as f:
        f.write("01")
    [step] = cf.scan(str(tmp_path))
    assert step["problem"] == "file array has 2 bytes, not 4"


def test_pick_step_takes_the_newest_complete_step(tmp_path):
    committed_step(str(tmp_path), 4)
    committed_step(str(tmp_path), 8)
    os.makedirs(tmp_path / "12.orbax-checkpoint-tmp-1")
    assert cf.pick_step(str(tmp_path))[0]["step"] == 8
    assert cf.pick_step(str(tmp_path), 4)[0]["step"] == 4


def test_pick_step_errors_name_the_problem(tmp_path):
    with pytest.raises(KerasmeshError) as info:
        cf.pick_step(str(tmp_path))
    assert info.value.kind == "checkpoint_directory"
    committed_step(str(tmp_path), 4)
    with pytest.raises(KerasmeshError) as info:
        cf.pick_step(str(tmp_path), 5)
    assert info.value.kind == "checkpoint_step"


# Who wrote a step, and each step checked on its own -------------------------

def orbax_step(directory, step):
    """A step as another Orbax tool (Keras's OrbaxCheckpoint) leaves it."""
    path = os.path.join(directory, str(step))
    os.makedirs(path)
    with open(os.path.join(path, "_CHECKPOINT_METADATA"), "w") as f:
        json.dump({"commit_timestamp_nsecs": 5}, f)
    return path


def test_number_named_folders_are_listed_for_who_wrote_them(tmp_path):
    d = str(tmp_path)
    committed_step(d, 4)
    orbax_step(d, 6)
    os.makedirs(tmp_path / "5")
    (tmp_path / "5" / "notes.txt").write_text("mine")
    steps = {s["step"]: s for s in cf.scan(d)}
    assert [(k, s["writer"], s["owned"], s["complete"])
            for k, s in sorted(steps.items())] == \
        [(4, "kerasmesh", True, True), (5, "unknown", False, False),
         (6, "orbax", False, True)]


def test_a_marker_for_another_step_is_not_ownership(tmp_path):
    path = committed_step(str(tmp_path), 4)
    os.rename(path, tmp_path / "7")
    [step] = cf.scan(str(tmp_path))
    assert step["step"] == 7 and not step["owned"]
    assert not step["complete"]


@pytest.mark.parametrize("damage", ["marker", "metadata", "flip", "truncate",
                                    "delete"])
def test_one_damaged_step_is_found_and_the_others_are_intact(tmp_path,
                                                              damage):
    d = str(tmp_path)
    committed_step(d, 4)
    path = committed_step(d, 8, {"array": "0123", "other": "abcd"})
    target = {"marker": cf.FILE_LIST, "metadata": "_CHECKPOINT_METADATA",
              "flip": "array", "truncate": "array", "delete": "other"}[damage]
    full = os.path.join(path, target)
    if damage == "delete":
        os.remove(full)
    elif damage == "truncate":
        with open(full, "w") as f:
            f.write("01")
    else:  # the same size, other bytes
        size = os.path.getsize(full)
        with open(full, "r+b") as f:
            f.write(b"{" * min(size, 3))
    steps = cf.scan(d)
    assert [s["complete"] for s in steps] == [True, False]
    name = "kerasmesh_files.json" if damage == "marker" else target
    assert name in steps[1]["problem"]
    chosen, passed = cf.pick_step(d)
    assert chosen["step"] == 4 and [s["step"] for s in passed] == [8]
    with pytest.raises(KerasmeshError) as info:
        cf.pick_step(d, 8)
    assert info.value.kind == "checkpoint_incomplete"
    assert "Step 8" in str(info.value) and name in str(info.value)


def test_a_malformed_timestamp_breaks_no_listing(tmp_path):
    d = str(tmp_path)
    path = committed_step(d, 4)
    with open(os.path.join(path, "_CHECKPOINT_METADATA"), "w") as f:
        json.dump({"commit_timestamp_nsecs": "soon"}, f)
    committed_step(d, 8)
    steps = cf.scan(d)
    assert [s["time"] is None for s in steps] == [True, False]
    assert [s["complete"] for s in steps] == [False, True]


def test_a_sealed_copy_stands_in_for_a_step_a_killed_swap_left(tmp_path):
    d = str(tmp_path)
    committed_step(d, 3)
    os.rename(tmp_path / "3", tmp_path / ".kerasmesh-staging-3")
    os.makedirs(tmp_path / ".kerasmesh-staging-9.orbax-checkpoint-tmp-1")
    [step] = cf.scan(d)
    assert step["step"] == 3 and step["complete"] and step["owned"]
    assert step["path"].endswith(".kerasmesh-staging-3")


def linked_step(tmp_path, step):
    """A checkpoint directory `ckpt` whose step `step` is a symbolic link
    to a kerasmesh step in the directory `outside`."""
    outside, d = tmp_path / "outside", tmp_path / "ckpt"
    outside.mkdir()
    d.mkdir()
    committed_step(str(outside), step)
    os.symlink(outside / str(step), d / str(step))
    return outside, d


def test_a_symlinked_step_is_read_but_not_owned(tmp_path):
    _, d = linked_step(tmp_path, 4)
    [step] = cf.scan(str(d))
    assert step["link"] and step["complete"] and not step["owned"]
