"""A checkpoint directory's steps: which are complete, and why not."""

import json
import os

import pytest

from kerasmesh import checkpoint_files as cf
from kerasmesh.errors import KerasmeshError


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
    cf.write_file_list(path)
    return path


def test_check_directory_makes_a_path_absolute(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert cf.check_directory("ckpt") == os.path.join(str(tmp_path), "ckpt")


@pytest.mark.parametrize("bad", ["", None, 3, ["a", "b"]])
def test_check_directory_refuses_what_is_not_a_non_empty_string(bad):
    with pytest.raises(KerasmeshError) as info:
        cf.check_directory(bad)
    assert info.value.kind == "argument"
    assert info.value.bullets[0][1] == "Received {value}."


def test_steps_are_ordered_by_number_with_unfinished_ones_marked(tmp_path):
    for name in ["10", "9", "11.orbax-checkpoint-tmp-123", "notes"]:
        os.makedirs(tmp_path / name)
    steps = cf.step_dirs(str(tmp_path))
    assert [(s["step"], s["committed"]) for s in steps] == \
        [(9, True), (10, True), (11, False)]
    assert cf.step_dirs(str(tmp_path / "missing")) == []


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
    assert cf.pick_step(str(tmp_path))["step"] == 8
    assert cf.pick_step(str(tmp_path), 4)["step"] == 4


def test_pick_step_errors_name_the_problem(tmp_path):
    with pytest.raises(KerasmeshError) as info:
        cf.pick_step(str(tmp_path))
    assert info.value.kind == "checkpoint_directory"
    committed_step(str(tmp_path), 4)
    with pytest.raises(KerasmeshError) as info:
        cf.pick_step(str(tmp_path), 5)
    assert info.value.kind == "checkpoint_step"
