"""The seal of a step: each process hashes its own files, and small files
are read without ever blocking or failing on what they hold."""

import hashlib
import os
import signal
import zlib

import pytest

from kerasmesh.checkpoint import files as cf
from kerasmesh.checkpoint import seal
from test_checkpoint_files import committed_step, orbax_step


@pytest.fixture()
def no_hang():
    """Fail (rather than hang) a test that blocks for 20 s."""
    def stop(signum, frame):
        raise TimeoutError("blocked")

    previous = signal.signal(signal.SIGALRM, stop)
    signal.alarm(20)
    yield
    signal.alarm(0)
    signal.signal(signal.SIGALRM, previous)


def test_files_are_hashed_by_the_process_that_wrote_them(tmp_path):
    names = ["_CHECKPOINT_METADATA", "pytree/_METADATA", "pytree/d/aa",
             "pytree/ocdbt.process_0/d/bb", "pytree/ocdbt.process_1/d/cc",
             "pytree/array_metadatas/process_1", "pytree/ocdbt.process_7/x"]
    for name in names:
        os.makedirs(tmp_path / os.path.dirname(name), exist_ok=True)
        (tmp_path / name).write_text(name)
    assert [seal.owner(n) for n in names] == [0, 0, 0, 0, 1, 1, 7]
    mine = [sorted(seal.hash_files(str(tmp_path), p, 2)) for p in (0, 1)]
    # A process number beyond the run's (7 of 2) falls to process 0.
    assert mine[1] == ["pytree/array_metadatas/process_1",
                       "pytree/ocdbt.process_1/d/cc"]
    assert sorted(mine[0] + mine[1]) == sorted(names)
    assert sorted(seal.hash_files(str(tmp_path))) == sorted(names)


@pytest.mark.parametrize("name", [seal.FILE_LIST, "_CHECKPOINT_METADATA"])
def test_a_fifo_named_as_a_step_file_blocks_nothing(tmp_path, no_hang, name):
    d = str(tmp_path)
    committed_step(d, 4)
    path = committed_step(d, 8)
    os.remove(os.path.join(path, name))
    os.mkfifo(os.path.join(path, name))
    steps = cf.scan(d)
    assert [s["complete"] for s in steps] == [True, False]
    assert "not a regular file" in steps[1]["problem"]
    assert cf.pick_step(d)[0]["step"] == 4
    assert seal.read_json(os.path.join(path, name)) is None


def test_a_fifo_in_another_tools_step_makes_it_incomplete(tmp_path, no_hang):
    d = str(tmp_path)
    orbax_step(d, 2)
    os.makedirs(tmp_path / "2" / "pytree", exist_ok=True)
    os.mkfifo(tmp_path / "2" / "pytree" / "_METADATA")
    [step] = cf.scan(d)
    assert not step["complete"]
    assert "pytree/_METADATA, which is not a regular file" in step["problem"]


@pytest.mark.parametrize("name", [seal.FILE_LIST, "_CHECKPOINT_METADATA",
                                  "pytree/_METADATA"])
def test_deeply_nested_json_marks_one_step_incomplete(tmp_path, name):
    d = str(tmp_path)
    committed_step(d, 4)
    orbax_step(d, 6)
    path = committed_step(d, 8) if name != "pytree/_METADATA" else \
        os.path.join(d, "6")
    os.makedirs(os.path.join(path, "pytree"), exist_ok=True)
    with open(os.path.join(path, name), "w") as f:
        f.write("[" * 200_000 + "]" * 200_000)
    steps = {s["step"]: s for s in cf.scan(d)}
    assert steps[4]["complete"]
    broken = steps[8] if name != "pytree/_METADATA" else steps[6]
    assert not broken["complete"], broken
    newest_intact = 6 if name != "pytree/_METADATA" else 4
    assert cf.pick_step(d)[0]["step"] == newest_intact


def test_read_regular_refuses_what_is_not_a_small_regular_file(tmp_path):
    (tmp_path / "big").write_bytes(b"x" * 100)
    assert seal.read_regular(str(tmp_path / "big"), limit=10) is None
    assert seal.read_regular(str(tmp_path / "big")) == b"x" * 100
    assert seal.read_regular(str(tmp_path)) is None
    assert seal.read_regular(str(tmp_path / "missing")) is None


def test_the_seal_records_crc32_and_finds_every_flipped_byte(tmp_path):
    d = str(tmp_path)
    data = bytes(range(256)) * 64
    path = committed_step(d, 4, {"array": data.decode("latin-1")})
    marker = seal.read_marker(path, 4)
    assert marker["version"] == seal.MARKER_VERSION == 3
    record = marker["files"]["array"]
    assert set(record) == {"size", "range", "crc32"}
    with open(os.path.join(path, "array"), "rb") as f:
        assert record["crc32"] == [f"{zlib.crc32(f.read()):08x}"]
    assert seal.verify(path, marker) is None
    full = os.path.join(path, "array")
    original = open(full, "rb").read()
    for at in (0, 1, len(original) // 2, len(original) - 1):
        for bit in (0, 7):
            changed = bytearray(original)
            changed[at] ^= 1 << bit
            with open(full, "wb") as f:
                f.write(changed)
            assert "array is damaged" in seal.verify(path, marker)
    with open(full, "wb") as f:
        f.write(original)
    assert seal.verify(path, marker) is None


def test_a_version_2_marker_with_sha256_is_still_verified(tmp_path):
    d = str(tmp_path)
    path = committed_step(d, 4, {"array": "0123"})
    full = os.path.join(path, "array")
    digest = hashlib.sha256(b"0123").hexdigest()
    seal.write_marker(path, 4, dict(seal.hash_files(path),
                                    array={"size": 4, "sha256": digest}))
    [step] = cf.scan(d)
    assert step["complete"], step["problem"]
    with open(full, "w") as f:
        f.write("0124")
    [step] = cf.scan(d)
    assert not step["complete"]
    assert step["problem"] == "file array is damaged (its checksum differs)"


def test_a_record_without_a_checksum_makes_the_step_incomplete(tmp_path):
    d = str(tmp_path)
    path = committed_step(d, 4, {"array": "0123"})
    seal.write_marker(path, 4, dict(seal.hash_files(path),
                                    array={"size": 4, "md5": "x"}))
    [step] = cf.scan(d)
    assert not step["complete"]
    assert "malformed at array" in step["problem"]


def test_a_large_file_is_checked_range_by_range(tmp_path, monkeypatch):
    monkeypatch.setattr(seal, "RANGE", 1000)
    d = str(tmp_path)
    path = committed_step(d, 4, {"array": "x" * 2500})
    record = seal.read_marker(path, 4)["files"]["array"]
    assert record["range"] == 1000 and len(record["crc32"]) == 3
    assert record["crc32"][0] == f"{zlib.crc32(b'x' * 1000):08x}"
    assert record["crc32"][2] == f"{zlib.crc32(b'x' * 500):08x}"
    assert cf.scan(d)[0]["complete"]
    full = os.path.join(path, "array")
    for at in (0, 999, 1000, 2499):
        with open(full, "r+b") as f:
            f.seek(at)
            f.write(b"y")
        assert cf.scan(d)[0]["problem"] == \
            "file array is damaged (its checksum differs)"
        with open(full, "r+b") as f:
            f.seek(at)
            f.write(b"x")
    assert cf.scan(d)[0]["complete"]
    # A list of checksums that does not cover the file is malformed.
    seal.write_marker(path, 4, dict(
        seal.hash_files(path), array=dict(record, crc32=record["crc32"][:2])))
    assert "malformed at array" in cf.scan(d)[0]["problem"]
    seal.write_marker(path, 4, dict(seal.hash_files(path),
                                    array=dict(record, range=999)))
    assert "malformed at array" in cf.scan(d)[0]["problem"]
