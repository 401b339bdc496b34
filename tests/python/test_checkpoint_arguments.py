"""What the checkpoint functions take: a directory to read or to write
into, a step number, a count."""

import os

import pytest

from kerasmesh.checkpoint import arguments as ca
from kerasmesh.core.errors import KerasmeshError
from test_checkpoint_files import committed_step


def test_check_directory_makes_a_path_absolute(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert ca.check_directory("ckpt") == os.path.join(str(tmp_path), "ckpt")


@pytest.mark.parametrize("bad", ["", None, 3, ["a", "b"]])
def test_check_directory_refuses_what_is_not_a_non_empty_string(bad):
    with pytest.raises(KerasmeshError) as info:
        ca.check_directory(bad)
    assert info.value.kind == "argument"
    assert info.value.bullets[0][1] == "Received {value}."


@pytest.mark.parametrize("bad", [1e10, float("inf"), -1, float("nan"), 2.5,
                                 True, "3", 2**31])
def test_a_step_out_of_range_names_step_and_value(bad):
    with pytest.raises(KerasmeshError) as info:
        ca.check_step(bad)
    assert info.value.kind == "argument"
    assert "`step`" in info.value.message
    assert info.value.bullets[0][1] == "Received {value}."
    assert ca.check_step(2**31 - 1) == 2**31 - 1 and ca.check_step(0.0) == 0


def test_a_directory_that_is_a_file_or_under_one_is_named(tmp_path):
    afile = tmp_path / "afile"
    afile.write_text("x")
    for path, words in [(afile, "is a file"),
                        (afile / "sub" / "ckpt", f"lies under a file, "
                                                 f"{afile}")]:
        with pytest.raises(KerasmeshError) as info:
            ca.check_directory(str(path))
        assert info.value.kind == "checkpoint_directory"
        assert f"{path} {words}" in str(info.value)


@pytest.mark.parametrize("bad", [0, -1, 1.5, float("inf"), True, "2"])
def test_counts_keep_and_every_are_positive_whole_numbers(bad):
    with pytest.raises(KerasmeshError) as info:
        ca.check_count(bad, "keep")
    assert info.value.kind == "argument"
    assert "`keep`" in info.value.message
    assert ca.check_count(None, "keep") is None
    assert ca.check_count(3.0, "every", False) == 3


def test_a_step_reached_through_a_link_is_refused_for_writing(tmp_path):
    d = str(tmp_path / "ckpt")
    os.makedirs(d)
    committed_step(d, 1)
    link = str(tmp_path / "link1")
    os.symlink(os.path.join(d, "1"), link)
    for inner in (link, os.path.join(link, "inner")):
        with pytest.raises(KerasmeshError) as info:
            ca.check_directory(inner, writing=True)
        assert info.value.kind == "checkpoint_directory"
        assert "is in step 1 of" in str(info.value)


def test_a_checkpoint_directory_in_a_step_is_refused_for_writing(tmp_path):
    d = str(tmp_path)
    committed_step(d, 1)
    for inner in (os.path.join(d, "1"), os.path.join(d, "1", "more", "x")):
        with pytest.raises(KerasmeshError) as info:
            ca.check_directory(inner, writing=True)
        assert info.value.kind == "checkpoint_directory"
        assert f"is in step 1 of {d}" in str(info.value)
        assert ca.check_directory(inner) == inner  # reading is harmless
    # A folder named like a step but never sealed holds no step.
    os.makedirs(os.path.join(d, "7"))
    assert ca.check_directory(os.path.join(d, "7", "run"), writing=True)


def test_a_file_is_no_directory_to_read_or_to_create(tmp_path):
    afile = str(tmp_path / "afile")
    with open(afile, "w") as f:
        f.write("x")
    with pytest.raises(KerasmeshError) as info:
        ca.check_directory(afile)
    assert "Pass the path of a checkpoint directory." in str(info.value)
    with pytest.raises(KerasmeshError) as info:
        ca.check_directory(afile, writing=True)
    assert "or of one to create" in str(info.value)
