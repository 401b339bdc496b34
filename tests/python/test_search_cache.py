"""Compiles' figures kept on disk: read back whole, never trusted when
broken, never in the way of a search, pruned least recently read first."""

import json
import os

import pytest

from kerasmesh.core.errors import KerasmeshError
from kerasmesh.search import cache
from kerasmesh.search.cache import Cache, clear, key_of
from kerasmesh.search.figures import Figures
from search_fakes import figures

KEY = key_of({"model": "mlp", "remat": "none"})


def kept():
    """Figures with every kind of field: numbers, the schedule, flags."""
    return figures(static=10.0, temp=2.5, inputs=1.0, gradients=3.0,
                   flops=1e9, weights=7.0, activations=3.0,
                   trace=[["c", "matmul", 1e9, 0.0], ["y", 0]],
                   ops=[{"collective": "all-reduce", "bytes": 7.0,
                         "groups": [[0, 1]], "axes": ["data"],
                         "weights": True}],
                   reshardings=2, micro_batch=4, by_class=True)


def test_figures_read_back_equal_to_those_kept(tmp_path):
    c = Cache(str(tmp_path))
    assert c.get(KEY) is None and c.misses == 1
    c.put(KEY, kept().stored())
    again = Cache(str(tmp_path))
    assert again.get(KEY, Figures.read) == kept()
    assert (again.hits, again.misses) == (1, 0)
    assert again.report() == {"directory": str(tmp_path), "hits": 1,
                              "misses": 0, "note": None}


def test_no_directory_or_no_key_keeps_nothing(tmp_path):
    off = Cache(None)
    off.put(KEY, kept().stored())
    assert off.get(KEY) is None and (off.hits, off.misses) == (0, 0)
    c = Cache(str(tmp_path))
    c.put(None, kept().stored())
    assert c.get(None) is None and os.listdir(tmp_path) == []


def test_a_broken_entry_is_removed_and_said_once(tmp_path):
    c = Cache(str(tmp_path))
    path = tmp_path / f"{KEY}.json"
    path.write_text("{not json")
    assert c.get(KEY) is None
    assert not path.exists() and c.misses == 1
    assert c.note.startswith("a cache entry could not be read")
    note = c.note
    # Another schema, then figures missing a field: removed too, the
    # first note kept.
    other = key_of({"other": 1})
    (tmp_path / f"{other}.json").write_text(json.dumps(
        {"schema": cache.SCHEMA + 1, "value": {}}))
    assert c.get(other, Figures.read) is None
    assert not (tmp_path / f"{other}.json").exists()
    (tmp_path / f"{other}.json").write_text(json.dumps(
        {"schema": cache.SCHEMA, "value": {"static": 1.0}}))
    assert c.get(other, Figures.read) is None
    assert not (tmp_path / f"{other}.json").exists()
    assert c.note == note and c.misses == 3
    c.put(KEY, kept().stored())
    assert c.get(KEY, Figures.read) == kept()


def test_plain_values_are_kept_as_they_are_and_others_not_at_all(tmp_path):
    c = Cache(str(tmp_path))
    cost = {"need": 5.0, "ops": [{"bytes": 1.0, "axes": ["data"]}],
            "warnings": [], "time": None}
    c.put(KEY, cost)
    assert c.get(KEY) == cost
    other = key_of({"other": 1})
    c.put(other, {"mesh": object()})  # not JSON: not kept
    assert c.get(other) is None and c.note is None


def test_a_directory_that_cannot_be_made_turns_the_cache_off(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("")
    c = Cache(str(blocker / "cache"))
    assert c.directory is None
    assert "can't be written" in c.note and str(blocker) in c.note
    c.put(KEY, kept().stored())
    assert c.get(KEY) is None
    assert c.report()["directory"] is None


def test_a_directory_that_stops_taking_files_turns_the_cache_off(tmp_path):
    where = tmp_path / "cache"
    c = Cache(str(where))
    where.rmdir()
    where.write_text("")  # a file where the directory was
    c.put(KEY, kept().stored())
    assert c.directory is None and "no longer kept" in c.note
    c.put(key_of({"again": 1}), kept().stored())
    assert c.note.count("no longer kept") == 1
    assert c.get(KEY) is None


def entry(directory, name, size, mtime):
    path = directory / f"{name}.json"
    path.write_text("x" * size)
    os.utime(path, (mtime, mtime))
    return path


def test_prune_keeps_the_most_recently_read_within_the_limit(tmp_path):
    old = entry(tmp_path, "old", 100, 1_000)
    middle = entry(tmp_path, "middle", 100, 2_000)
    new = entry(tmp_path, "new", 100, 3_000)
    other = tmp_path / "notes.txt"
    other.write_text("x" * 1000)
    Cache(str(tmp_path)).prune(limit=250)
    assert new.exists() and middle.exists() and not old.exists()
    assert other.exists()  # not an entry


def test_reading_an_entry_keeps_it_from_the_prune(tmp_path):
    c = Cache(str(tmp_path))
    c.put(KEY, kept().stored())
    path = tmp_path / f"{KEY}.json"
    size = path.stat().st_size
    os.utime(path, (1_000, 1_000))
    newer = entry(tmp_path, "newer", size, 2_000)
    assert c.get(KEY, Figures.read) == kept()  # read: now the most recent
    c.prune(limit=size)
    assert path.exists() and not newer.exists()


def test_put_prunes_to_the_caches_limit(tmp_path, monkeypatch):
    c = Cache(str(tmp_path))
    c.put(KEY, kept().stored())
    first = tmp_path / f"{KEY}.json"
    os.utime(first, (1_000, 1_000))
    # A limit of one entry: the next put keeps only itself.
    assert Cache.prune.__defaults__ == (cache.MAX_BYTES,)
    monkeypatch.setattr(Cache.prune, "__defaults__", (first.stat().st_size,))
    other = key_of({"other": 1})
    c.put(other, kept().stored())
    assert (tmp_path / f"{other}.json").exists() and not first.exists()


def test_a_key_is_of_plain_values_only_and_ignores_their_order():
    assert key_of({"a": 1, "b": [1, 2]}) == key_of({"b": [1, 2], "a": 1})
    assert key_of({"a": 1}) != key_of({"a": 2})
    assert len(key_of({"a": None})) == 64
    assert key_of({"optimizer": object()}) is None


def test_clear_removes_entries_and_counts_them(tmp_path):
    Cache(str(tmp_path)).put(KEY, kept().stored())
    (tmp_path / "half.tmp").write_text("")
    (tmp_path / "notes.txt").write_text("")
    assert clear(str(tmp_path)) == 2
    assert os.listdir(tmp_path) == ["notes.txt"]
    assert clear(str(tmp_path)) == 0
    assert clear(str(tmp_path / "absent")) == 0


@pytest.mark.parametrize("use, says", [
    (Cache, "`cache` must be `TRUE`, `FALSE` or a directory"),
    (clear, "`dir` must be a directory"),
])
def test_a_file_given_as_the_directory_is_refused_untouched(tmp_path, use,
                                                             says):
    file = tmp_path / "figures"
    file.write_text("mine")
    with pytest.raises(KerasmeshError) as e:
        use(str(file))
    assert e.value.kind == "argument" and says in str(e.value)
    assert file.read_text() == "mine"


def test_an_entry_that_is_a_directory_is_said_as_it_is(tmp_path):
    # Neither read nor removed: the note says so, and that the cache then
    # stopped keeping figures (its entry can't be replaced).
    (tmp_path / f"{KEY}.json").mkdir()
    c = Cache(str(tmp_path))
    assert c.get(KEY) is None and c.misses == 1
    assert "could not be removed either" in c.note
    assert "removed and compiled again" not in c.note
    c.put(KEY, kept().stored())
    assert c.directory is None
    assert c.note.startswith("a cache entry could not be read")
    assert "figures are no longer kept" in c.note
