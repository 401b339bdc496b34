"""The search's tuning constants: each one used, each within what its
reason allows."""

import ast
import os

from kerasmesh.search import tuning

SEARCH = os.path.dirname(tuning.__file__)


def constants():
    return {n: v for n, v in vars(tuning).items() if n.isupper()}


def imported_from_tuning(folder):
    """{module: names it imports from `.tuning`} for `folder`'s modules."""
    out = {}
    for name in sorted(os.listdir(folder)):
        if not name.endswith(".py"):
            continue
        with open(os.path.join(folder, name), encoding="utf-8") as f:
            tree = ast.parse(f.read())
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.level == 1 and \
                    node.module == "tuning":
                out.setdefault(name, set()).update(a.name for a in
                                                   node.names)
    return out


def test_every_constant_is_used_by_the_search():
    used = set().union(*imported_from_tuning(SEARCH).values())
    assert set(constants()) == used


def test_the_check_sees_a_constant_nobody_imports(tmp_path):
    (tmp_path / "tuning.py").write_text("A = 1\nB = 2\n")
    (tmp_path / "solve.py").write_text("from .tuning import A\n")
    assert imported_from_tuning(str(tmp_path)) == {"solve.py": {"A"}}


def test_each_constant_is_within_what_its_reason_allows():
    c = constants()
    # Counts.
    assert isinstance(c["EXHAUSTIVE"], int) and c["EXHAUSTIVE"] >= 1
    assert isinstance(c["MAX_VERIFIED"], int) and c["MAX_VERIFIED"] >= 1
    # The floor stays under XLA's total: at most the whole optimizer.
    assert 0 < c["SLOT_SHARE"] <= 1
    # The profile leaves time for the full-depth compile.
    assert 0 < c["PROFILE_SHARE"] < 1
    assert 0 < c["RESHARD_PENALTY"] < 1 and 0 < c["LINEAR_WITHIN"] < 1
