"""The registry of condition kinds (`errors.kinds()`) against the code:
every kind raised from Python or R is listed, and every listed kind is
raised somewhere."""

import glob
import os
import re

import pytest

from kerasmesh.core import errors

ROOT = os.path.join(os.path.dirname(__file__), "..", "..")
PY_FILES = sorted(glob.glob(os.path.join(ROOT, "inst", "python",
                                         "kerasmesh", "**", "*.py"),
                            recursive=True))
R_FILES = sorted(glob.glob(os.path.join(ROOT, "R", "*.R")))

# Python: KerasmeshError("kind", ...), mismatch("kind", ...) (a helper that
# builds one), warn("kind", ...), and plan problems, which reach R as
# kerasmesh_<severity>_<kind>: _problem("kind", ERROR|WARNING, ...) and
# problem("kind", "error"|"warning", ...).
PY_ERROR = re.compile(r'\b(?:KerasmeshError|mismatch)\(\s*"(\w+)"')
PY_WARNING = re.compile(r'(?<![\w.])warn\(\s*"(\w+)"')
PY_PROBLEM = re.compile(
    r'\b_?problem\(\s*"(\w+)",\s*(ERROR|WARNING|"error"|"warning")')
PY_ENVELOPE = re.compile(r'"kind":\s*"(\w+)"')
# Kinds passed on from a variable rather than written out: each site is
# listed with where its kinds come from, so a new one has to be looked at.
PY_DYNAMIC = re.compile(
    r'(?<!def )\b(?:KerasmeshError|KerasmeshWarning|mismatch|(?<![\w.])warn)'
    r'\(\s*(?!")([^,)\s]+)')
KNOWN_DYNAMIC = {
    ("errors.py", "kind"),        # KerasmeshWarning/warn() pass theirs on
    ("variables.py", "kind"),     # checkpoint's mismatch(): callers' literals
    ("planner.py", 'p["kind"]'),  # first_error(): problem kinds, scanned
    ("errors.py", "ValueError"),  # class definitions, not calls
    ("errors.py", "UserWarning"),
    ("errors.py", "KerasmeshWarning"),  # warn() wraps one
}

# R: kind = "..." (inside kerasmesh_warn() a warning, elsewhere an error:
# kerasmesh_abort(), checkers that pass it on, descriptions of Python
# errors), and literal classes.
R_KIND = re.compile(r'\bkind\s*=\s*"(\w+)"')
R_WARN_CALL = re.compile(r'\bkerasmesh_warn\(')
R_CLASS = re.compile(r'"kerasmesh_(error|warning)_(\w+)"')


def _read(path):
    with open(path, encoding="utf-8") as f:
        return f.read()


def _code(text):
    """R source without comments (roxygen and others)."""
    return "\n".join(line.split("#", 1)[0] if "#" in line
                     and '"' not in line.split("#", 1)[0] else line
                     for line in text.splitlines())


def _call_end(text, start):
    """Index just past the parenthesis closing the one before `start`."""
    depth, i, quote = 1, start, None
    while depth and i < len(text):
        c = text[i]
        if quote:
            if c == "\\":
                i += 1
            elif c == quote:
                quote = None
        elif c in "\"'":
            quote = c
        elif c == "(":
            depth += 1
        elif c == ")":
            depth -= 1
        i += 1
    return i


def raised_kinds():
    """{"errors": {kind: [where]}, "warnings": {...}} found in the code."""
    found = {"errors": {}, "warnings": {}}

    def add(group, kind, where):
        found[group].setdefault(kind, []).append(where)

    for path in PY_FILES:
        name, text = os.path.basename(path), _read(path)
        for m in PY_ERROR.finditer(text):
            add("errors", m.group(1), name)
        for m in PY_WARNING.finditer(text):
            add("warnings", m.group(1), name)
        for m in PY_PROBLEM.finditer(text):
            group = "errors" if "ERROR" in m.group(2).upper() and \
                "WARN" not in m.group(2).upper() else "warnings"
            add(group, m.group(1), name)
        if name == "errors.py":
            for m in PY_ENVELOPE.finditer(text):
                add("errors", m.group(1), name)
    for path in R_FILES:
        name, text = os.path.basename(path), _code(_read(path))
        warn_spans = [(m.end(), _call_end(text, m.end()))
                      for m in R_WARN_CALL.finditer(text)]
        for m in R_KIND.finditer(text):
            in_warn = any(a <= m.start() < b for a, b in warn_spans)
            add("warnings" if in_warn else "errors", m.group(1), name)
        for m in R_CLASS.finditer(text):
            add("errors" if m.group(1) == "error" else "warnings",
                m.group(2), name)
    return found


def test_kinds_returns_plain_dicts_of_descriptions():
    out = errors.kinds()
    assert set(out) == {"errors", "warnings"}
    for group in out.values():
        assert type(group) is dict
        for kind, text in group.items():
            assert re.fullmatch(r"[a-z][a-z_]*[a-z]", kind)
            assert isinstance(text, str) and text.strip()
            assert "\n" not in text


def test_kinds_returns_copies():
    errors.kinds()["errors"]["made_up"] = "x"
    assert "made_up" not in errors.kinds()["errors"]


def test_every_raised_kind_is_in_the_registry():
    found, listed = raised_kinds(), errors.kinds()
    for group in ("errors", "warnings"):
        missing = {k: v for k, v in found[group].items()
                   if k not in listed[group]}
        assert not missing, f"{group} raised but not in errors.py: {missing}"


def test_every_registered_kind_is_raised_somewhere():
    found, listed = raised_kinds(), errors.kinds()
    for group in ("errors", "warnings"):
        unused = sorted(set(listed[group]) - set(found[group]))
        assert not unused, f"{group} in errors.py but never raised: {unused}"


def test_kinds_passed_on_from_variables_are_known_sites():
    sites = set()
    for path in PY_FILES:
        for m in PY_DYNAMIC.finditer(_read(path)):
            sites.add((os.path.basename(path), m.group(1)))
    assert sites <= KNOWN_DYNAMIC, (
        f"new kinds computed at run time: {sites - KNOWN_DYNAMIC}; list "
        "where their kinds come from in KNOWN_DYNAMIC and scan them")


def test_scanner_sees_both_languages_and_both_groups():
    found = raised_kinds()
    assert "mesh_shape" in found["errors"]          # Python literal
    assert "no_keras" in found["errors"]            # R kind =
    assert "launch_worker" in found["errors"]       # R class literal
    assert "layout_divisibility" in found["errors"]  # plan problem
    assert "replicated" in found["warnings"]        # problem(..., "warning")
    assert "rows_dropped" in found["warnings"]      # R kerasmesh_warn()


# -- facts about received values ---------------------------------------------

@pytest.mark.parametrize("value,fact", [
    (None, {"type": "null", "length": 0}),
    (True, {"type": "logical", "length": 1, "values": [True]}),
    ("a", {"type": "character", "length": 1, "values": ["a"]}),
    (2.5, {"type": "numeric", "length": 1, "values": [2.5]}),
    (["data", "model"],
     {"type": "character", "length": 2, "values": ["data", "model"]}),
    ([None, "model"],
     {"type": "character", "length": 2, "values": [None, "model"]}),
    ([1, "a"], {"type": "list", "length": 2, "values": [1, "a"]}),
    ((1, 2), {"type": "tuple", "length": 2, "values": [1, 2]}),
    ({"a": 1.0},
     {"type": "named_list", "length": 1, "names": ["a"], "values": [1.0]}),
    ([[1, 2]], {"type": "list", "length": 1,
                "values": [{"type": "numeric", "length": 2}]}),
    (object(), {"type": "object", "length": 1, "class": "object"}),
])
def test_a_value_fact_says_what_r_passed_in_plain_values(value, fact):
    assert errors.value_fact(value) == fact


def test_a_value_fact_is_bounded():
    fact = errors.value_fact(["x" * 100] * 50)
    assert fact["length"] == 50
    assert len(fact["values"]) == errors.PREVIEW_VALUES
    assert len(fact["values"][0]) == errors.PREVIEW_CHARS


def test_an_object_fact_names_its_class_with_its_module():
    fact = errors.value_fact(errors.KerasmeshWarning("k", "m"))
    assert fact["class"] == "kerasmesh.core.errors.KerasmeshWarning"


def test_received_puts_the_fact_beside_the_text():
    assert errors.received([1, 2], "Dimension 2 is {value}.") == (
        "x", "Dimension 2 is {value}.",
        {"type": "numeric", "length": 2, "values": [1, 2]})


def test_keyword_bullets_go_received_x_list_then_i():
    e = errors.KerasmeshError("argument", "`a` must be b.", [("*", "more")],
                              x="why", i="way out", received="v")
    assert [b[0] for b in e.bullets] == ["x", "x", "*", "i"]
    assert e.bullets[0][1] == "Received {value}."
    assert str(e) == ('`a` must be b.\nx Received the string "v".\nx why\n'
                      "* more\ni way out")


def test_the_envelope_carries_the_fact_as_plain_values():
    def fail():
        raise errors.KerasmeshError("argument", "`a` must be b.",
                                    received=("t", 1))

    out = errors.envelope(fail, (), {})
    assert out["bullets"] == [["x", "Received {value}.",
                               {"type": "tuple", "length": 2,
                                "values": ["t", 1]}]]


def test_no_message_text_calls_a_value_a_python_object():
    for value in [None, 1, "a", [1], (1,), {"a": 1}, object(), [[1]]]:
        assert "Python" not in errors.fact_words(errors.value_fact(value))
    for path in PY_FILES:
        assert "a Python {" not in _read(path), path
