"""The README's example is the file the R tests run."""

import os
import re

ROOT = os.path.join(os.path.dirname(__file__), "..", "..")


def read(*path):
    with open(os.path.join(ROOT, *path), encoding="utf-8") as f:
        return f.read()


def test_readme_example_is_inst_examples_readme_r():
    # The block after the comment that names the file (the install
    # instructions before it have R blocks of their own).
    block = re.search(r"inst/examples/readme\.R.*?-->\n```r\n(.*?)```",
                      read("README.md"), re.S).group(1)
    assert block == read("inst", "examples", "readme.R")


def test_readme_is_for_r_users_first():
    """Installing the R way and getting Python come before any make target."""
    text = read("README.md")
    first_make = text.index("make ")
    for step in ("install.packages(", "R CMD INSTALL", "install_kerasmesh()",
                 'use_backend("jax")', "py_require()"):
        assert text.index(step) < first_make, step


def test_readme_rules_match_whole_paths():
    """Keras fullmatches keys: "dense.*kernel" misses "sequential/dense/..."."""
    keys = re.findall(r'"([^"]*\.\*[^"]*)"\s*=', read("README.md"))
    assert keys and all(k.startswith(".*") for k in keys)


def test_ci_runs_the_readme_demo_from_a_newcomers_shell():
    """`.ci/run` runs `make demo-fresh` (it fails when the demo fails),
    which runs `make demo` with kerasmesh's variables unset and a
    keras.json saying "tensorflow", given through KERAS_HOME."""
    assert re.search(r"^make demo-fresh$", read(".ci", "run"), re.M)
    target = re.search(r"^demo-fresh:\n\t(.*)$", read("Makefile"), re.M)
    assert target and target.group(1) == "bash tools/demo-fresh.sh"
    script = read("tools", "demo-fresh.sh")
    assert "set -euo pipefail" in script
    for name in ("KERAS_BACKEND", "RETICULATE_PYTHON", "XLA_FLAGS"):
        assert f"-u {name}" in script, name
    assert '"backend": "tensorflow"' in script
    assert 'KERAS_HOME="$keras_home"' in script
    assert "make --no-print-directory demo" in script
