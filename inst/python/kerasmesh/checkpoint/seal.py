"""The bytes of a step: reading its small files safely, and its seal.

A step kerasmesh committed holds a marker, `kerasmesh_files.json`: the
step's number and every file of the step with its size and the CRC-32 of
each 64 MiB range of it. The seal is paid at scale: every process of a run
checksums the files it wrote itself (`hash_files()`, the ranges over
several threads, so that one large file is not read by one thread alone;
zlib releases the GIL),
while training goes on when the save runs in the background, and process
0 only combines the records (`write_marker()`). Nothing re-reads a step
to prune it: pruning and listing steps for a save check the marker and the
files' sizes (`marker_problem(deep=False)`); a restore checks the checksums
of the step it reads while Orbax reads it (`verify()`), and
`checkpoint_info()` checks every step's.

The integrity scheme: a file missing or of another size is found by its
size; changed bytes by its CRC-32 (zlib's), which finds every change of up
to 32 consecutive bits (a flipped byte, a word overwritten) and misses a
random change with probability 2^-32. It guards against damage (a disk, a
copy, a killed writer), not against someone forging a step, as SHA-256
would not either (the marker is not signed); it costs half the CPU time of
SHA-256 here, which matters on a machine that trains meanwhile. Markers
that list SHA-256 checksums (version 2, from development versions of
kerasmesh) are still read and verified.

Which process wrote a file is read from Orbax's layout: files under a
`ocdbt.process_N/` or `process_N` folder are process N's, the rest
process 0's. Any assignment would do: each file is checked by exactly one
process, and the marker lists them all.

Small files (markers, metadata, the lock) are opened only when they are
regular files, without blocking (a FIFO named like one never hangs a
reader), and read up to a bound; malformed or deeply nested JSON reads as
None, never as an error that hides the other steps.
"""

from __future__ import annotations

import concurrent.futures
import errno
import hashlib
import json
import os
import re
import stat
import zlib
from typing import Any

FILE_LIST = "kerasmesh_files.json"
MARKER_FORMAT = "kerasmesh-checkpoint-step"
MARKER_VERSION = 3
# Files are checksummed in ranges of this many bytes, each a CRC-32.
RANGE = 64 << 20
_CHUNK = 1 << 20
# Metadata and markers are small; a larger one is not kerasmesh's.
MAX_SMALL_FILE = 256 << 20
_OWNER = re.compile(r"(?:^|/)(?:ocdbt\.)?process_(?P<p>[0-9]+)(?:/|$)")


def hash_threads() -> int:
    """Threads that hash one process's files at once."""
    return max(1, min(8, os.cpu_count() or 1))


# Reading small files -------------------------------------------------------

def read_regular(path: str, limit: int = MAX_SMALL_FILE) -> bytes | None:
    """A regular file's bytes (at most `limit`), or None when it is
    missing, not a regular file (a FIFO, a directory, a device) or larger.
    Never blocks: the file is opened with O_NONBLOCK and checked first."""
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | \
        getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(path, flags)
    except OSError:
        return None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode) or info.st_size > limit:
            return None
        with os.fdopen(fd, "rb", closefd=False) as f:
            return f.read(limit + 1)[:limit]
    except OSError:
        return None
    finally:
        os.close(fd)


def read_json(path: str) -> Any:
    """A JSON file's value, or None when it is missing, not a regular
    file, malformed or nested too deeply for Python to read."""
    data = read_regular(path)
    if data is None:
        return None
    try:
        return json.loads(data.decode("utf-8"))
    except (ValueError, RecursionError):
        return None


def is_regular(path: str) -> bool:
    """Whether `path` is a regular file (not following a symbolic link)."""
    try:
        return stat.S_ISREG(os.lstat(path).st_mode)
    except OSError:
        return False


# Hashing --------------------------------------------------------------------

def file_digest(path: str, algorithm: str = "crc32", offset: int = 0,
                length: int | None = None) -> str:
    """The checksum of a regular file's bytes from `offset`, `length` of
    them (None: to its end): `algorithm` "crc32" (zlib's, as 8 hex digits)
    or "sha256".

    Raises:
        OSError: when it can't be read or is not a regular file.
    """
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0)
    fd = os.open(path, flags)
    with os.fdopen(fd, "rb", buffering=0) as f:
        if not stat.S_ISREG(os.fstat(f.fileno()).st_mode):
            raise OSError(errno.EINVAL, "not a regular file", path)
        f.seek(offset)
        left = float("inf") if length is None else length
        digest = hashlib.sha256() if algorithm == "sha256" else None
        crc, buffer = 0, bytearray(_CHUNK)
        view = memoryview(buffer)
        while left > 0 and (n := f.readinto(view[:int(min(_CHUNK, left))])):
            left -= n
            if digest is not None:
                digest.update(view[:n])
            else:
                crc = zlib.crc32(view[:n], crc)
    return digest.hexdigest() if digest is not None else f"{crc:08x}"


def ranges(size: int) -> list[tuple[int, int]]:
    """The (offset, length) of each `RANGE` of a file of `size` bytes,
    checksummed apart so that a large file is read by several threads."""
    return [(o, min(RANGE, size - o)) for o in range(0, size, RANGE)] or \
        [(0, 0)]


def owner(name: str) -> int:
    """The process that wrote a file of a step, from Orbax's layout."""
    found = _OWNER.search(name.replace(os.sep, "/"))
    return int(found.group("p")) if found else 0


def step_names(path: str) -> list[str]:
    """Every regular file of a step but the marker, relative to it."""
    out = []
    for root, _, names in os.walk(path):
        for name in names:
            rel = os.path.relpath(os.path.join(root, name), path)
            if not rel.startswith(FILE_LIST) and \
                    is_regular(os.path.join(root, name)):
                out.append(rel)
    return sorted(out)


def hash_files(path: str, process: int = 0,
               processes: int = 1) -> dict[str, dict]:
    """Size and CRC-32 of each `RANGE` of the files of a step that
    `process` wrote (all of them for a single process), over several
    threads."""
    mine = [n for n in step_names(path)
            if (owner(n) if owner(n) < processes else 0) == process]
    sizes = {n: os.path.getsize(os.path.join(path, n)) for n in mine}
    jobs = [(os.path.join(path, n), "crc32", o, length)
            for n in mine for o, length in ranges(sizes[n])]
    with concurrent.futures.ThreadPoolExecutor(hash_threads()) as pool:
        crcs = iter(list(pool.map(lambda j: file_digest(*j), jobs)))
    return {n: {"size": sizes[n], "range": RANGE,
                "crc32": [next(crcs) for _ in ranges(sizes[n])]}
            for n in mine}


# The marker ----------------------------------------------------------------

def write_marker(path: str, step: int, files: dict[str, dict]) -> None:
    """Seal a written step with the combined records of every process:
    its marker, written, synced and renamed atomically."""
    marker = {"format": MARKER_FORMAT, "version": MARKER_VERSION,
              "step": int(step), "files": files}
    tmp = os.path.join(path, FILE_LIST + ".tmp")
    with open(tmp, "w", encoding="utf-8") as f:
        json.dump(marker, f)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, os.path.join(path, FILE_LIST))


def read_marker(path: str, step: int) -> dict | None:
    """The step's marker when it is kerasmesh's and names `step`."""
    marker = read_json(os.path.join(path, FILE_LIST))
    if not isinstance(marker, dict) or \
            marker.get("format") != MARKER_FORMAT or \
            marker.get("step") != step or \
            not isinstance(marker.get("files"), dict):
        return None
    return marker


def file_problem(path: str, name: str, record: Any) -> str | None:
    """What is wrong with one listed file's presence and size, or None."""
    if not isinstance(record, dict) or not isinstance(record.get("size"), int):
        return f"its file list ({FILE_LIST}) is malformed at {name}"
    full = os.path.join(path, name)
    try:
        info = os.stat(full)
    except OSError:
        return f"file {name} is missing"
    if not stat.S_ISREG(info.st_mode):
        return f"file {name} is missing (it is not a regular file)"
    if info.st_size != record["size"]:
        return f"file {name} has {info.st_size} bytes, not {record['size']}"
    return None


def checksum_jobs(path: str, name: str, record: dict) -> list[tuple] | None:
    """What to read to check one listed file: (name, path, algorithm,
    offset, length, expected) for each range of its CRC-32s (or the whole
    file's SHA-256, in markers of version 2); None when the record has no
    usable checksum."""
    full = os.path.join(path, name)
    if isinstance(record.get("sha256"), str):
        return [(name, full, "sha256", 0, None, record["sha256"])]
    crcs, size = record.get("crc32"), record["size"]
    if record.get("range") != RANGE or not isinstance(crcs, list) or \
            len(crcs) != len(ranges(size)):
        return None
    return [(name, full, "crc32", o, length, crc)
            for (o, length), crc in zip(ranges(size), crcs)]


def _job_problem(job: tuple) -> str | None:
    name, full, algorithm, offset, length, expected = job
    try:
        same = file_digest(full, algorithm, offset, length) == expected
    except OSError as e:
        return f"file {name} can't be read ({e.strerror or e})"
    return None if same else f"file {name} is damaged (its checksum differs)"


def marker_problem(path: str, marker: dict, deep: bool) -> str | None:
    """Why a sealed step is damaged: a file missing or resized, or, with
    `deep`, changed (checksums compared over several threads)."""
    listed = sorted(marker["files"].items())
    for name, record in listed:
        problem = file_problem(path, name, record)
        if problem is not None:
            return problem
    return verify(path, marker) if deep else None


def verify(path: str, marker: dict) -> str | None:
    """The first file (by name) whose checksum differs from the marker's,
    as a problem, or None; the files' ranges are read over several
    threads."""
    jobs = []
    for name, record in sorted(marker["files"].items()):
        found = checksum_jobs(path, name, record) \
            if isinstance(record, dict) and \
            isinstance(record.get("size"), int) else None
        if found is None:
            return f"its file list ({FILE_LIST}) is malformed at {name}"
        jobs.extend(found)
    with concurrent.futures.ThreadPoolExecutor(hash_threads()) as pool:
        for problem in pool.map(_job_problem, jobs):
            if problem is not None:
                return problem
    return None
