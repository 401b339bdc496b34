"""Profile figures kept on disk, so a repeated search compiles nothing new.

A key is the SHA-256 of everything that decides a compile's figures, as
canonical JSON: the model (its class, each variable's path, shape and
dtype, its inputs, its dtype policy), the layout's rules and the mesh
(shape, axes, devices in order), the levers, the batch, the optimizer's
and the loss's configurations, the compiler (`cost/target.py`'s label
and GPU target) and the versions of kerasmesh's cost code, Keras, JAX and
jaxlib. A value is plain JSON: a profile compile's figures
(`figures.Figures`) or a full-depth compile's cost (`verify.py`), in a
file named by the key under the directory R gives (`tools::R_user_dir(
"kerasmesh", "cache")`). The cache holds at most `MAX_BYTES`: the files
read least recently go first.

A cache that can't be used never stops a search: an unwritable or full
directory turns it off for the search, saying so once (`Cache.note`); an
entry that does not read back as figures of this version is removed and
compiled again, never trusted.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import tempfile
from collections.abc import Callable
from typing import Any

from ..core import kinds
from ..core.errors import KerasmeshError

# Figures of one 2-block compile take 0.1 to 5 MB (the schedule); 2 GB
# keep a few hundred searches.
MAX_BYTES = 2 * 2 ** 30
# What a cache file must hold to be read back (a file of another layout
# is discarded).
SCHEMA = 2


class Cache:
    """Figures by key in `directory` (None: no cache).

    Attributes:
        hits, misses: figures read back, and not found.
        note: why the cache is off, or what went wrong, once; None.
    """

    def __init__(self, directory: str | None):
        self.directory = directory
        self.hits = self.misses = 0
        self.note: str | None = None
        if directory is None:
            return
        if os.path.exists(directory) and not os.path.isdir(directory):
            raise KerasmeshError(
                kinds.ARGUMENT,
                "`cache` must be `TRUE`, `FALSE` or a directory.",
                x=f'Received "{directory}", a file.',
                i="Give a directory, or `TRUE` for the search's own "
                  "(`search_cache_dir()`).")
        try:
            os.makedirs(directory, exist_ok=True)
            probe = tempfile.NamedTemporaryFile(dir=directory, delete=True)
            probe.close()
        except OSError as e:
            self._off(f"the cache directory {directory} can't be written "
                      f"({e.strerror or e}): figures are not kept")

    def _off(self, why: str) -> None:
        self.directory = None
        self._say(why)

    def _say(self, why: str) -> None:
        """Add `why` to the note (each thing once)."""
        self.note = why if self.note is None else f"{self.note}; {why}"

    def _path(self, key: str) -> str:
        return os.path.join(self.directory, f"{key}.json")

    def get(self, key: str | None,
            read: Callable[[Any], Any] = lambda v: v) -> Any:
        """What is kept under `key`, as `read` makes it of the stored JSON
        (raising KeyError, TypeError or ValueError for a value it can't
        take), or None."""
        if self.directory is None or key is None:
            return None
        path = self._path(key)
        try:
            with open(path, encoding="utf-8") as f:
                stored = json.load(f)
            if stored.get("schema") != SCHEMA:
                raise ValueError("another schema")
            value = read(stored["value"])
            os.utime(path)
        except FileNotFoundError:
            self.misses += 1
            return None
        except (OSError, ValueError, KeyError, TypeError) as e:
            try:
                os.remove(path)
                done = "it was removed and compiled again"
            except OSError:
                done = "it could not be removed either; compiled again"
            if self.note is None or "could not be read" not in self.note:
                self._say(f"a cache entry could not be read ({e}): {done}")
            self.misses += 1
            return None
        self.hits += 1
        return value

    def put(self, key: str | None, value: Any) -> None:
        """Keep `value` (plain JSON values) under `key`, written whole or
        not at all."""
        if self.directory is None or key is None:
            return
        try:
            text = json.dumps({"schema": SCHEMA, "value": value})
        except (TypeError, ValueError):
            return  # not plain values: not kept
        try:
            fd, tmp = tempfile.mkstemp(dir=self.directory, suffix=".tmp")
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                f.write(text)
            os.replace(tmp, self._path(key))
        except OSError as e:
            with contextlib.suppress(OSError, UnboundLocalError):
                os.remove(tmp)
            self._off(f"the cache directory {self.directory} is full or "
                      f"can't be written ({e.strerror or e}): figures are "
                      "no longer kept")
            return
        self.prune()

    def prune(self, limit: int = MAX_BYTES) -> None:
        """Remove the entries read least recently beyond `limit` bytes."""
        try:
            entries = [e for e in os.scandir(self.directory)
                       if e.name.endswith(".json")]
            stats = sorted(((e.stat().st_mtime, e.stat().st_size, e.path)
                            for e in entries), reverse=True)
        except OSError:
            return
        total = 0
        for _, size, path in stats:
            total += size
            if total > limit:
                with contextlib.suppress(OSError):
                    os.remove(path)

    def report(self) -> dict:
        """Plain values for the result."""
        return {"directory": self.directory, "hits": self.hits,
                "misses": self.misses, "note": self.note}


def key_of(parts: dict[str, Any]) -> str | None:
    """The key of `parts` (plain values), or None when they are not
    (an optimizer or loss that describes itself in objects)."""
    try:
        text = json.dumps(parts, sort_keys=True, separators=(",", ":"))
    except (TypeError, ValueError):
        return None
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def clear(directory: str) -> int:
    """Remove every entry under `directory`; return how many."""
    n = 0
    try:
        entries = list(os.scandir(directory))
    except FileNotFoundError:
        return 0
    except NotADirectoryError:
        raise KerasmeshError(
            kinds.ARGUMENT, "`dir` must be a directory.",
            x=f'Received "{directory}", a file.',
            i="Give the search cache's directory (`search_cache_dir()`)."
        ) from None
    for e in entries:
        if e.name.endswith((".json", ".tmp")):
            with contextlib.suppress(OSError):
                os.remove(e.path)
                n += 1
    return n
