"""Counts and lists worded in one place."""

import csv
from pathlib import Path

from kerasmesh.core import text


def test_plural_and_listing_read_as_english():
    assert text.plural(1, "entry") == "1 entry"
    assert text.plural(2, "entry") == "2 entries"
    assert text.plural(3, "variable") == "3 variables"
    assert text.plural(2, "loss") == "2 losses"
    assert text.plural(1, "sample") == "1 sample"
    assert text.listing(["a"]) == '"a"'
    assert text.listing(["a", "b", "c", "d", "e"]) == \
        '"a", "b", "c" and 2 more'


def test_noun_agrees_with_its_count():
    assert text.noun(1, "device") == "device"
    assert text.noun(0, "device") == "devices"
    assert text.noun(8, "device") == "devices"
    assert text.noun(2, "key") == "keys"
    assert text.noun(2, "entry") == "entries"


def test_listing_counts_names_left_out_and_more_given():
    assert text.listing(["a", "b"]) == '"a" and "b"'
    assert text.listing(["a"], more=2) == '"a" and 2 more'


def test_bytes_read_as_r_prints_them():
    # One table for both: R's bytes_text() is tested against it too
    # (tests/testthat/test-utils-bytes.R), so the two say the same.
    table = Path(__file__).parents[1] / "testthat/fixtures/bytes-text.csv"
    with table.open(newline="") as f:
        rows = list(csv.DictReader(f))
    assert len(rows) > 10
    assert [text.bytes_text(float(r["bytes"])) for r in rows] == \
        [r["text"] for r in rows]


def test_a_placement_reads_as_r_code():
    assert text.r_axes([None, "model"]) == 'c(NA, "model")'
    assert text.r_axes(["data"]) == 'c("data")'


def test_a_string_is_quoted_as_r_prints_it():
    assert text.string("dense/kernel") == '"dense/kernel"'
    assert text.string('seq/.*"kernel') == '"seq/.*\\"kernel"'
    assert text.string("block_\\d+") == '"block_\\\\d+"'
    assert text.string("données") == '"données"'
    assert text.listing(['a"b', "c"]) == '"a\\"b" and "c"'
