"""Errors and warnings: the facts they carry, the envelope, and the route
warnings take to R. The registry of kinds is tested in test_core_kinds.py."""

import glob
import os
import threading
import warnings

import pytest

from kerasmesh.core import errors, kinds

ROOT = os.path.join(os.path.dirname(__file__), "..", "..")
PY_FILES = sorted(glob.glob(os.path.join(ROOT, "inst", "python",
                                         "kerasmesh", "**", "*.py"),
                            recursive=True))


def _read(path):
    with open(path, encoding="utf-8") as f:
        return f.read()


def test_kinds_returns_plain_dicts_of_descriptions():
    out = errors.kinds()
    assert set(out) == {"errors", "warnings"}
    assert out == kinds.kinds()
    for group in out.values():
        assert type(group) is dict
        for kind, text in group.items():
            assert isinstance(kind, str)
            assert isinstance(text, str) and text.strip()


def test_kinds_returns_copies():
    errors.kinds()["errors"]["made_up"] = "x"
    assert "made_up" not in errors.kinds()["errors"]


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
    fact = errors.value_fact(errors.KerasmeshWarning(kinds.REPLICATED, "m"))
    assert fact["class"] == "kerasmesh.core.errors.KerasmeshWarning"


def test_received_puts_the_fact_beside_the_text():
    assert errors.received([1, 2], "Dimension 2 is {value}.") == (
        "x", "Dimension 2 is {value}.",
        {"type": "numeric", "length": 2, "values": [1, 2]})


def test_keyword_bullets_go_received_x_list_then_i():
    e = errors.KerasmeshError(kinds.ARGUMENT, "`a` must be b.", [("*", "more")],
                              x="why", i="way out", received="v")
    assert [b[0] for b in e.bullets] == ["x", "x", "*", "i"]
    assert e.bullets[0][1] == "Received {value}."
    assert str(e) == ('`a` must be b.\nx Received the string "v".\nx why\n'
                      "* more\ni way out")


def test_the_envelope_carries_the_fact_as_plain_values():
    def fail():
        raise errors.KerasmeshError(kinds.ARGUMENT, "`a` must be b.",
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


# -- the route of warnings to R ------------------------------------------------

@pytest.fixture
def r_warning():
    """A stand-in for R's registered warning function, recording calls."""
    calls = []
    old = errors.set_r_warning(lambda *a: calls.append(a))
    yield calls
    errors.set_r_warning(old)


def test_unknown_kinds_fail_where_they_are_raised():
    with pytest.raises(kinds.UnknownKind, match="mesh_shap"):
        errors.KerasmeshError("mesh_shap", "m")
    with pytest.raises(kinds.UnknownKind):
        errors.KerasmeshWarning(kinds.MESH_SHAPE, "an error kind")
    with pytest.raises(kinds.UnknownKind):
        errors.warn("nope", "m")


def test_without_r_a_warning_is_a_python_warning():
    with pytest.warns(errors.KerasmeshWarning) as caught:
        errors.warn(kinds.REPLICATED, "big", [("i", "split it")])
    assert caught[0].message.kind == "replicated"
    assert caught[0].message.bullets == [("i", "split it")]


def test_outside_a_shim_call_r_signals_the_warning(r_warning):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        errors.warn(kinds.REPLICATED, "big", [("i", "split it")])
    assert r_warning == [("replicated", "big", [["i", "split it"]])]
    assert caught == []


def test_inside_a_shim_call_the_warning_travels_with_the_result(r_warning):
    out = errors.envelope(
        lambda: errors.warn(kinds.ROWS_DROPPED, "rows", [("x", "3")]),
        (), {})
    assert out["warnings"] == [["rows_dropped", "rows", [["x", "3"]]]]
    assert r_warning == []
    errors.warn(kinds.REPLICATED, "after")
    assert [c[0] for c in r_warning] == ["replicated"]


def test_a_warning_r_could_not_take_is_a_python_warning():
    def refuse(*args):
        raise RuntimeError("(Unknown exception occurred)")

    old = errors.set_r_warning(refuse)
    try:
        with pytest.warns(errors.KerasmeshWarning) as caught:
            errors.warn(kinds.REPLICATED, "big")
    finally:
        errors.set_r_warning(old)
    assert caught[0].message.kind == "replicated"


def test_a_thread_other_than_rs_never_calls_r(r_warning):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        t = threading.Thread(
            target=lambda: errors.warn(kinds.REPLICATED, "thread"))
        t.start()
        t.join()
    assert r_warning == []
    assert [w.message.kind for w in caught] == ["replicated"]


def test_the_envelope_names_other_errors_python():
    def fail():
        raise RuntimeError("boom")

    assert errors.envelope(fail, (), {})["kind"] == kinds.PYTHON


def test_ctrl_c_that_reticulates_handler_lost_is_raised_as_an_interrupt(
        tmp_path):
    # reticulate 1.28's SIGINT handler, where R handled the interrupt
    # while the handler asked it: the error it raises then.
    folder = tmp_path / "rpytools"
    folder.mkdir()
    source = ("def _signal_handler(sig, frame):\n"
              "    raise RuntimeError('(Unknown exception occurred)')\n")
    path = str(folder / "signals.py")
    handler = {}
    exec(compile(source, path, "exec"), handler)

    def waiting():
        handler["_signal_handler"](2, None)  # Python runs it mid-wait

    with pytest.raises(KeyboardInterrupt):
        errors.envelope(waiting, (), {})
    # The same error from anywhere else is an error like any other.

    def elsewhere():
        raise RuntimeError("(Unknown exception occurred)")

    assert errors.envelope(elsewhere, (), {})["kind"] == kinds.PYTHON
