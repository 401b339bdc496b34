"""Which Keras backend runs, and the error for functions that need JAX."""

import os

import pytest

from kerasmesh.core import backend
from kerasmesh.core.errors import KerasmeshError


def test_the_tests_run_on_the_jax_backend():
    assert backend.keras_backend() == "jax"


def test_require_backend_passes_on_an_allowed_backend():
    assert backend.require_backend() is None
    assert backend.require_backend(("jax", "tensorflow")) is None


def test_require_backend_names_the_running_backend_and_the_way_out():
    with pytest.raises(KerasmeshError) as info:
        backend.require_backend(("torch",), "`cost()`")
    e = info.value
    assert e.kind == "backend"
    assert e.message == '`cost()` needs the Keras "torch" backend.'
    assert e.bullets[0] == ("x", 'Keras is running on the "jax" backend.')
    assert "KERAS_BACKEND=jax" in e.bullets[-1][1]
    assert 'keras3::use_backend("jax")' in e.bullets[-1][1]
    assert "restart R" in e.bullets[-1][1]


def test_backend_state_names_the_running_backend_once_keras_started():
    import keras  # noqa: F401  (conftest has started it)

    assert backend.backend_state() == {"started": True, "backend": "jax"}


def test_backend_state_reads_the_planned_backend_before_keras_starts(
        monkeypatch):
    import sys

    monkeypatch.delitem(sys.modules, "keras")
    monkeypatch.setenv("KERAS_BACKEND", "tensorflow")
    assert backend.backend_state() == {"started": False,
                                       "backend": "tensorflow"}
    monkeypatch.delenv("KERAS_BACKEND")
    assert backend.backend_state() == {"started": False, "backend": ""}


def test_jax_backend_started_once_jax_lists_devices():
    import jax

    jax.devices()
    assert backend.jax_backend_started() is True


def test_set_environ_sets_this_process_variables(monkeypatch):
    monkeypatch.delenv("KERASMESH_TEST_VARIABLE", raising=False)
    backend.set_environ({"KERASMESH_TEST_VARIABLE": "1"})
    assert os.environ["KERASMESH_TEST_VARIABLE"] == "1"
    monkeypatch.delenv("KERASMESH_TEST_VARIABLE")
