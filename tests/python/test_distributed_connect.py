"""Connecting to the coordinator: JAX's timeout margin and the errors a
failed `jax.distributed.initialize()` becomes. Nothing here connects."""

from kerasmesh.distributed import connect as c


def test_jax_timeout_leaves_a_margin_and_at_least_one_second():
    assert c.jax_timeout(300) == 300 - c.JAX_CONNECT_MARGIN_S
    assert c.jax_timeout(2) == 1


ARGS = {"coordinator_address": "h:1", "num_processes": 2, "process_id": 0,
        "launcher": "Slurm"}


def test_a_late_client_error_is_the_timeout():
    e = c._connect_error(RuntimeError("std::bad_cast"), [], ARGS,
                         timeout=10, left=10, elapsed=10.2)
    assert e.kind == "distributed_timeout"
    assert "h:1" in e.message and "timeout of 10 s" in e.message
    assert "found by Slurm" in e.message
    assert "as the coordinator" in e.bullets[0][1]


def test_an_early_error_is_a_connection_error():
    args = dict(ARGS, process_id=1)
    e = c._connect_error(RuntimeError("std::bad_cast"), [], args,
                         timeout=300, left=300, elapsed=0.5)
    assert e.kind == "distributed_connect"
    assert "bad_cast" not in e.bullets[0][1]
    e = c._connect_error(RuntimeError("UNKNOWN: Failed to start RPC server"),
                         [], ARGS, timeout=300, left=300, elapsed=400)
    assert e.kind == "distributed_connect"
    assert "Failed to start RPC server" in e.bullets[0][1]


def test_a_client_that_never_reaches_process_0_names_launcher_and_address():
    e = c._timeout_error(dict(ARGS, process_id=1), 30, 30.2, [])
    assert e.kind == "distributed_timeout"
    assert "h:1" in e.message and "Slurm" in e.message


def test_disconnect_outside_a_run_does_nothing():
    assert c.disconnect() is False
