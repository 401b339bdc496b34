"""The README's example is the file the R tests run."""

import os
import re

ROOT = os.path.join(os.path.dirname(__file__), "..", "..")


def read(*path):
    with open(os.path.join(ROOT, *path), encoding="utf-8") as f:
        return f.read()


def test_readme_example_is_inst_examples_readme_r():
    block = re.search(r"```r\n(.*?)```", read("README.md"), re.S).group(1)
    assert block == read("inst", "examples", "readme.R")


def test_readme_rules_match_whole_paths():
    """Keras fullmatches keys: "dense.*kernel" misses "sequential/dense/..."."""
    keys = re.findall(r'"([^"]*\.\*[^"]*)"\s*=', read("README.md"))
    assert keys and all(k.startswith(".*") for k in keys)
