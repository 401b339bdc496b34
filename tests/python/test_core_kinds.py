"""The registry of condition kinds: declared once, checked when raised,
named (never spelled) at every raise site, and copied into R by
tools/kinds.py."""

import ast
import glob
import importlib.util
import os
import re
import sys

import pytest

from kerasmesh.core import kinds
from kerasmesh.core.errors import KerasmeshError, KerasmeshWarning
from kerasmesh.core.kinds import ERROR, WARNING
from kerasmesh.core.layout_problems import problem

ROOT = os.path.join(os.path.dirname(__file__), "..", "..")
SHIM = os.path.join(ROOT, "inst", "python", "kerasmesh")
PY_FILES = sorted(glob.glob(os.path.join(SHIM, "**", "*.py"),
                            recursive=True))
R_FILES = sorted(glob.glob(os.path.join(ROOT, "R", "*.R")))
# Calls whose first argument (or `kind=`) is a condition kind.
RAISERS = {"KerasmeshError", "KerasmeshWarning", "warn", "problem",
           "_problem", "mismatch"}


def _tree(path):
    with open(path, encoding="utf-8") as f:
        return ast.parse(f.read(), path)


def _rel(path):
    return os.path.relpath(path, SHIM)


def _call_name(func):
    if isinstance(func, ast.Name):
        return func.id
    if isinstance(func, ast.Attribute) and not (
            isinstance(func.value, ast.Name) and func.value.id == "warnings"):
        return func.attr
    return None


def _is_str(node):
    return isinstance(node, ast.Constant) and isinstance(node.value, str)


def _kindish(node):
    return (isinstance(node, ast.Name) and node.id == "kind") or \
        (isinstance(node, ast.Attribute) and node.attr == "kind") or \
        (isinstance(node, ast.Subscript) and _is_str(node.slice)
         and node.slice.value == "kind")


def spelled_kinds(tree):
    """(line, text) of every kind written as a string where code raises,
    stores or compares a kind."""
    registered = set(kinds.registry())
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and _call_name(node.func) in RAISERS:
            args = node.args[:1] + [k.value for k in node.keywords
                                    if k.arg == "kind"]
            out += [(a.lineno, a.value) for a in args if _is_str(a)]
        elif isinstance(node, ast.Dict):
            out += [(v.lineno, v.value) for k, v in zip(node.keys,
                                                         node.values)
                    if k is not None and _is_str(k) and k.value == "kind"
                    and _is_str(v) and v.value in registered]
        elif isinstance(node, ast.Compare):
            sides = [node.left] + node.comparators
            if any(_kindish(s) for s in sides):
                for s in sides:
                    elts = s.elts if isinstance(s, (ast.Tuple, ast.List,
                                                    ast.Set)) else [s]
                    out += [(e.lineno, e.value) for e in elts
                            if _is_str(e) and e.value in registered]
    return out


def test_each_kind_has_its_constant_and_a_text():
    for name, kind in kinds.registry().items():
        assert re.fullmatch(r"[a-z][a-z_]*[a-z]", name)
        assert getattr(kinds, name.upper()) == name
        assert kind.error or kind.warning
        for text in (kind.error, kind.warning):
            assert text is None or (text.strip() and text.endswith("."))


def test_kinds_are_grouped_by_severity_as_plain_values():
    out = kinds.kinds()
    assert set(out) == {"errors", "warnings"}
    assert "mesh_shape" in out["errors"] and "mesh_shape" not in \
        out["warnings"]
    assert "layout_rank" in out["errors"] and "layout_rank" in \
        out["warnings"]
    assert "replicated" in out["warnings"]


def test_check_accepts_registered_kinds_of_their_severity_only():
    assert kinds.check(kinds.MESH_SHAPE) == "mesh_shape"
    assert kinds.check(kinds.REPLICATED, kinds.WARNING) == "replicated"
    for bad, severity in [("mesh_shap", kinds.ERROR),
                          (kinds.REPLICATED, kinds.ERROR),
                          (kinds.MESH_SHAPE, kinds.WARNING),
                          (None, kinds.ERROR), (3, kinds.ERROR)]:
        with pytest.raises(kinds.UnknownKind):
            kinds.check(bad, severity)


def test_a_typo_fails_where_it_is_written():
    with pytest.raises(AttributeError):
        kinds.MESH_SHAPPE  # noqa: B018 - the lookup is the test


def test_conditions_and_problems_check_their_kind_when_made():
    with pytest.raises(kinds.UnknownKind):
        KerasmeshError("no_such_kind", "m")
    with pytest.raises(kinds.UnknownKind):
        KerasmeshWarning("no_such_kind", "m")
    with pytest.raises(kinds.UnknownKind):
        problem(kinds.REPLICATED, ERROR, None, None, "m", [], "s")
    with pytest.raises(kinds.UnknownKind):
        problem(kinds.MESH_SHAPE, WARNING, None, None, "m", [], "s")
    assert problem(kinds.LAYOUT_RANK, WARNING, None, None, "m", [],
                   "s")["kind"] == "layout_rank"
    assert KerasmeshError(kinds.MESH_SHAPE, "m").kind == "mesh_shape"


def test_no_raise_site_spells_a_kind_as_a_string():
    spelled = {f"{_rel(p)}:{line}: {value!r}"
               for p in PY_FILES if not p.endswith(os.path.join("core",
                                                                "kinds.py"))
               for line, value in spelled_kinds(_tree(p))}
    assert not spelled, (
        "name kinds by the registry's constants (kinds.MESH_SHAPE), not as "
        f"strings: {sorted(spelled)}")


def test_the_raise_site_check_sees_literals():
    tree = ast.parse('KerasmeshError("mesh_shape", "m")\n'
                     'warn(kind="replicated")\n'
                     'x = {"kind": "python"}\n'
                     'if p["kind"] == "replicated": pass\n'
                     'warnings.warn("text")\n'
                     'KerasmeshError(kinds.MESH_SHAPE, "m")\n')
    assert [v for _, v in spelled_kinds(tree)] == \
        ["mesh_shape", "replicated", "python", "replicated"]


def _python_uses():
    used = set()
    for p in PY_FILES:
        for node in ast.walk(_tree(p)):
            if isinstance(node, ast.Attribute) and \
                    isinstance(node.value, ast.Name) and \
                    node.value.id in ("kinds", "_kinds") and \
                    node.attr.isupper():
                used.add(node.attr.lower())
    return used


def _r_uses():
    used = set()
    for p in R_FILES:
        if p.endswith("kinds.R"):
            continue
        with open(p, encoding="utf-8") as f:
            code = "\n".join(line for line in f
                             if not line.lstrip().startswith("#"))
        used |= set(re.findall(r"\bkinds\$(\w+)", code))
    return used


def test_every_registered_kind_is_raised_somewhere():
    # Kinds raised from a variable come from plan problems, whose kinds
    # are named where the problem is made.
    unused = set(kinds.registry()) - _python_uses() - _r_uses()
    assert not unused, f"registered but never raised: {sorted(unused)}"


def _generator():
    path = os.path.join(ROOT, "tools", "kinds.py")
    spec = importlib.util.spec_from_file_location("_tools_kinds", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def test_the_r_copy_is_current():
    gen = _generator()
    with open(os.path.join(ROOT, "R", "kinds.R"), encoding="utf-8") as f:
        current = f.read()
    assert current == gen.r_source(kinds), \
        "R/kinds.R is stale: run python3 tools/kinds.py, then roxygen"


def test_the_r_copy_lists_every_kind_and_its_text():
    text = _generator().r_source(kinds)
    flat = re.sub(r"\n#'\s+", " ", text)
    for severity, group in kinds.kinds().items():
        for name, description in group.items():
            item = f"\\item{{`kerasmesh_{severity[:-1]}_{name}`}}" \
                   f"{{{description}}}"
            assert item in flat
    assert max(len(line) for line in text.splitlines()) <= 80
