"""Distributed initialization: arguments, fallbacks and their errors.

Nothing here connects: every call either fails validation or finds JAX
already started.
"""

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kerasmesh.distributed import initialize as d
from kerasmesh.core.errors import KerasmeshError

ENV = {d.ENV_ADDRESSES: "127.0.0.1:1234", d.ENV_NUM_PROCESSES: "2",
       d.ENV_PROCESS_ID: "1"}


def kind_of(fn, *args, **kwargs):
    with pytest.raises(KerasmeshError) as info:
        fn(*args, **kwargs)
    return info.value


def test_arguments_fall_back_to_keras_environment_variables():
    args = d.resolve_arguments(environ=ENV)
    assert (args["coordinator_address"], args["num_processes"],
            args["process_id"]) == ("127.0.0.1:1234", 2, 1)
    assert args["sources"]["process_id"] == d.ENV_PROCESS_ID


def test_arguments_take_precedence_over_environment_variables():
    args = d.resolve_arguments("10.0.0.1:99", 4, 3, environ=ENV)
    assert (args["coordinator_address"], args["num_processes"],
            args["process_id"]) == ("10.0.0.1:99", 4, 3)
    assert set(args["sources"].values()) == {"argument"}


def test_empty_environment_variables_count_as_unset():
    args = d.resolve_arguments(environ={k: "" for k in ENV})
    assert args["coordinator_address"] is None
    assert args["num_processes"] is None


def test_job_addresses_give_the_coordinator_first():
    args = d.resolve_arguments("10.0.0.1:1234,10.0.0.2:2345", 2, 0)
    assert args["coordinator_address"] == "10.0.0.1:1234"


def test_job_addresses_must_match_the_number_of_processes():
    e = kind_of(d.resolve_arguments, "10.0.0.1:1,10.0.0.2:2", 3, 0)
    assert e.kind == "distributed_argument"
    assert "2 addresses for 3 processes" in e.bullets[0][1]


def test_process_id_must_be_below_num_processes():
    e = kind_of(d.resolve_arguments, "127.0.0.1:1234", 2, 2)
    assert e.kind == "distributed_argument"
    assert "from 0 to 1" in e.message
    assert "Received 2 with 2 processes." == e.bullets[0][1]


def test_errors_name_the_environment_variable_a_value_came_from():
    e = kind_of(d.resolve_arguments,
                environ={**ENV, d.ENV_PROCESS_ID: "one"})
    assert d.ENV_PROCESS_ID in e.message
    e = kind_of(d.resolve_arguments, environ={**ENV, d.ENV_PROCESS_ID: "5"})
    assert d.ENV_PROCESS_ID in e.message
    e = kind_of(d.resolve_arguments,
                environ={**ENV, d.ENV_ADDRESSES: "localhost"})
    assert d.ENV_ADDRESSES in e.message


@pytest.mark.parametrize("n", [0, -1, 1.5, "2", True, float("nan")])
def test_num_processes_must_be_a_positive_whole_number(n):
    e = kind_of(d.resolve_arguments, "127.0.0.1:1234", n, 0)
    assert e.kind == "distributed_argument"
    assert "`num_processes`" in e.message


def test_the_three_arguments_come_together():
    e = kind_of(d.resolve_arguments, "127.0.0.1:1234", None, 0)
    assert "given together" in e.message
    assert d.ENV_NUM_PROCESSES in e.bullets[0][1]


def test_nothing_given_leaves_detection_to_jax():
    args = d.resolve_arguments(environ={})
    assert args["coordinator_address"] is None
    assert args["process_id"] is None


@given(n=st.integers(1, 64), data=st.data())
def test_every_process_id_in_range_is_accepted(n, data):
    pid = data.draw(st.integers(0, n - 1))
    assert d.resolve_arguments("h:1", n, pid)["process_id"] == pid


@given(n=st.integers(1, 64), extra=st.integers(0, 100))
def test_every_process_id_out_of_range_is_rejected(n, extra):
    assert kind_of(d.resolve_arguments, "h:1", n, n + extra).kind == \
        "distributed_argument"


@pytest.mark.parametrize("timeout", [0, -3, float("inf"), "10", None, True])
def test_timeout_must_be_a_positive_number(timeout):
    assert kind_of(d.check_timeout, timeout).kind == "distributed_argument"


def test_timeout_is_rounded_up():
    assert d.check_timeout(2.2) == 3


def test_initialize_validates_before_it_connects():
    e = kind_of(d.initialize, "127.0.0.1:1234", 2, 5)
    assert e.kind == "distributed_argument"


def test_initialize_after_jax_started_is_an_error():
    import jax

    jax.devices()
    e = kind_of(d.initialize, "127.0.0.1:1234", 2, 0, timeout=5)
    assert e.kind == "distributed_started"
    assert d.is_initialized() is False


def test_a_process_on_its_own_is_process_0_of_1():
    assert d.process_index() == 0
    assert d.process_count() == 1


def test_bind_address_is_a_host_or_host_and_port():
    assert d.resolve_bind("127.0.0.1", None, 1234) == ("127.0.0.1", 1234)
    assert d.resolve_bind("[::1]:99", None, 1234) == ("[::1]", 99)
    assert d.resolve_bind(None, {d.ENV_BIND_ADDRESS: "127.0.0.1:5"}, 1) == \
        ("127.0.0.1", 5)
    assert d.resolve_bind(None, {}, 1234) is None
    e = kind_of(d.resolve_bind, "no such:host", None, 1)
    assert e.kind == "distributed_argument"
    assert "`bind_address`" in e.message
