"""Docs that cannot drift: every path CONTRIBUTING.md and ARCHITECTURE.md
name exists, ARCHITECTURE.md names every R file, and NEWS.md says what a
user gets rather than how the package got there.

The checks take the repository root they read, so the last tests run them
on small made-up trees and see each rule fail."""

import os
import re

from source_trees import write_tree

ROOT = os.path.join(os.path.dirname(__file__), "..", "..")
DOCS = ("CONTRIBUTING.md", "ARCHITECTURE.md")
# Where a path in the docs may be relative to, besides the root: the shim
# (`kerasmesh/__init__.py`, `core/kinds.py`), the R tests
# (`fixtures/make-fixtures.R`) and the Python tests.
BASES = ("", os.path.join("inst", "python"),
         os.path.join("inst", "python", "kerasmesh"),
         os.path.join("tests", "testthat"), os.path.join("tests", "python"))
_CODE = re.compile(r"`([^`\s]+)`")
# Words that narrate the package's own history: a first release has no
# "before" for its users.
_HISTORY = re.compile(r"\b(no longer|used to|as before|than before|"
                      r"times (faster|slower)|formerly|previously|"
                      r"any ?more|now)\b", re.IGNORECASE)


def doc_paths(text):
    """The repository paths a document names in backticks: words with a
    "/" in them, leaving out templates (`test-<x>.R`), globs (`tools/*.sh`),
    code (calls, `a -> b`), home folders, URLs and module paths written
    with dots."""
    out = []
    for word in _CODE.findall(text):
        if "/" not in word or any(c in word for c in "<>*()=${}~:,'\""):
            continue
        if word.startswith(("..", "/", "http")) or word.endswith("/R"):
            continue
        out.append(word.rstrip("."))
    return sorted(set(out))


def ignored(root):
    """The folders .gitignore names (build outputs such as `site/`): the
    docs may name them, though a clone has none."""
    path = os.path.join(root, ".gitignore")
    if not os.path.exists(path):
        return set()
    with open(path, encoding="utf-8") as f:
        return {line.strip().strip("/") + "/" for line in f
                if line.strip().endswith("/")}


def missing_paths(root, docs=DOCS):
    """"doc: path" for each path a document names that exists under none
    of `BASES` below `root` (folders .gitignore names count as there)."""
    skip = ignored(root)
    out = []
    for doc in docs:
        with open(os.path.join(root, doc), encoding="utf-8") as f:
            text = f.read()
        for path in doc_paths(text):
            if path in skip:
                continue
            if not any(os.path.exists(os.path.join(root, base, path))
                       for base in BASES):
                out.append(f"{doc}: {path}")
    return out


def unlisted_r_files(root, doc="ARCHITECTURE.md"):
    """The files of R/ that `doc` does not name."""
    with open(os.path.join(root, doc), encoding="utf-8") as f:
        named = set(_CODE.findall(f.read()))
    files = sorted(f for f in os.listdir(os.path.join(root, "R"))
                   if f.endswith(".R"))
    return [f for f in files if f not in named and f"R/{f}" not in named]


def history_words(root, doc="NEWS.md"):
    """(phrase, the words around it) for each phrase of `doc` that tells
    its history (lines joined, so a phrase split over two lines counts)."""
    with open(os.path.join(root, doc), encoding="utf-8") as f:
        text = " ".join(f.read().split())
    return [(m.group(0), text[max(m.start() - 30, 0):m.end() + 30])
            for m in _HISTORY.finditer(text)]


def test_every_path_the_docs_name_exists():
    with open(os.path.join(ROOT, "CONTRIBUTING.md"), encoding="utf-8") as f:
        assert "R/utils-checks.R" in doc_paths(f.read())
    assert missing_paths(ROOT) == []


def test_architecture_md_names_every_r_file():
    assert unlisted_r_files(ROOT) == []


def test_news_says_what_users_get_not_the_packages_history():
    assert history_words(ROOT) == []


def test_a_news_item_that_tells_history_is_reported(tmp_path):
    write_tree(str(tmp_path), {"NEWS.md": (
        "* `f()` is three times faster than before, and `g()` no\n"
        "  longer warns. `h()` gives the answer, as it is meant to.\n")})
    found = history_words(str(tmp_path))
    assert [phrase for phrase, _ in found] == \
        ["times faster", "than before", "no longer"]


def test_a_path_that_does_not_exist_is_reported(tmp_path):
    write_tree(str(tmp_path), {
        "R/utils-checks.R": "", "R/plan.R": "",
        "inst/python/kerasmesh/core/kinds.py": "",
        "CONTRIBUTING.md": "Checks in `R/checks.R` and `R/utils-checks.R`; "
                           "kinds in `core/kinds.py`; tests in "
                           "`tests/testthat/test-<x>.R`; `tools/*.sh`.\n",
        "ARCHITECTURE.md": "`R/utils-checks.R`, `plan/nothing.py`.\n",
    })
    assert missing_paths(str(tmp_path)) == [
        "CONTRIBUTING.md: R/checks.R", "ARCHITECTURE.md: plan/nothing.py"]
    assert unlisted_r_files(str(tmp_path)) == ["plan.R"]
