"""Hostile counts, ids and launcher variables (issue 21): each is refused
with a classed error before anything proportional to it is built."""

import time

import pytest

from kerasmesh.distributed import connect
from kerasmesh.distributed import handshake as h
from kerasmesh.distributed import launchers
from kerasmesh.distributed import initialize as d
from kerasmesh.core.errors import KerasmeshError

MPIRUN = {
    "OMPI_MCA_orte_hnp_uri": "3411542016.0;tcp://127.0.0.1:39123",
    "OMPI_COMM_WORLD_SIZE": "2", "OMPI_COMM_WORLD_RANK": "1",
}
SRUN = {"SLURM_JOB_ID": "1234", "SLURM_STEP_NODELIST": "localhost",
        "SLURM_NTASKS": "2", "SLURM_PROCID": "1", "SLURM_LOCALID": "1"}
K8S = {"JOB_COMPLETION_INDEX": "1",
       "JAX_COORDINATOR_ADDRESS": "train-0.train:1234",
       "KERASMESH_NUM_PROCESSES": "2"}


def refused(fn, *args, **kwargs):
    started = time.monotonic()
    with pytest.raises(KerasmeshError) as info:
        fn(*args, **kwargs)
    assert time.monotonic() - started < 2
    assert info.value.kind == "distributed_argument"
    return str(info.value)


@pytest.mark.parametrize("n", [1e12, 2**20 + 1, 10**30, 2.0**60])
def test_a_process_count_beyond_the_bound_is_refused(n):
    text = refused(d.resolve_arguments, "127.0.0.1:1234", n, 0)
    assert "`num_processes` must be at most 1,048,576" in text


def test_the_largest_process_count_is_accepted():
    args = d.resolve_arguments("127.0.0.1:1234", 2**20, 2**20 - 1)
    assert args["num_processes"] == 2**20


def test_initialize_refuses_1e12_processes_before_it_waits():
    refused(d.initialize, "127.0.0.1:1234", 1e12, 0, timeout=6)


def test_a_process_id_beyond_the_bound_is_refused():
    text = refused(d.resolve_arguments, "127.0.0.1:1234", 2, 1e15)
    assert "`process_id` must be at most 1,048,575" in text


@pytest.mark.parametrize("value", ["1" * 13, "9" * 5000, "1" * 100000])
def test_counts_in_keras_variables_are_bounded(value):
    env = {"KERAS_DISTRIBUTION_JOB_ADDRESSES": "127.0.0.1:1234",
           "KERAS_DISTRIBUTION_NUM_PROCESSES": value,
           "KERAS_DISTRIBUTION_PROCESS_ID": "0"}
    text = refused(d.resolve_arguments, environ=env)
    assert "KERAS_DISTRIBUTION_NUM_PROCESSES" in text


@pytest.mark.parametrize("env,var", [
    (MPIRUN, "OMPI_COMM_WORLD_SIZE"), (SRUN, "SLURM_NTASKS"),
    (K8S, "KERASMESH_NUM_PROCESSES")])
@pytest.mark.parametrize("value", ["1000000000000", "9" * 5000])
def test_launcher_counts_beyond_the_bound_are_refused(env, var, value):
    text = refused(launchers.detect, dict(env, **{var: value}))
    assert f"`{var}`" in text
    assert len(text) < 1000


@pytest.mark.parametrize("env,var", [
    (MPIRUN, "OMPI_COMM_WORLD_RANK"), (SRUN, "SLURM_PROCID"),
    (K8S, "JOB_COMPLETION_INDEX")])
def test_launcher_ids_beyond_the_bound_are_refused(env, var):
    text = refused(launchers.detect, dict(env, **{var: "1" * 30}))
    assert f"`{var}`" in text


@pytest.mark.parametrize("env,var", [
    (MPIRUN, "OMPI_MCA_orte_hnp_uri"), (SRUN, "SLURM_STEP_NODELIST"),
    (SRUN, "SLURM_JOB_ID"), (K8S, "JAX_COORDINATOR_ADDRESS")])
def test_over_long_launcher_variables_are_refused_by_name(env, var):
    text = refused(launchers.detect, dict(env, **{var: "tcp://" * 200000}))
    assert f"`{var}` must be at most 65,536 characters" in text


def test_a_slurm_job_id_of_many_digits_is_a_classed_error():
    text = refused(launchers.detect, dict(SRUN, SLURM_JOB_ID="7" * 5000))
    assert "`SLURM_JOB_ID`" in text


def test_an_over_long_coordinator_address_is_refused():
    text = refused(d.resolve_arguments, "a" * 100000 + ":1234", 2, 0)
    assert "at most 300 characters" in text


def test_open_mpi_ipv6_coordinator_keeps_its_brackets():
    env = dict(MPIRUN,
               OMPI_MCA_orte_hnp_uri="3411542016.0;tcp6://[::1,fe80::1]:39123")
    found = launchers.detect(env)
    assert found["coordinator_address"].startswith("[::1]:")
    # kerasmesh accepts the address it found itself.
    host, _ = d.parse_address(found["coordinator_address"])
    assert host == "[::1]"
    args = d.resolve_arguments(environ=env)
    assert args["coordinator_address"] == found["coordinator_address"]


def test_open_mpi_ipv4_coordinator_is_unchanged():
    found = launchers.detect(MPIRUN)
    assert found["coordinator_address"].startswith("127.0.0.1:")


def test_a_timeout_names_a_bounded_number_of_missing_processes():
    started = time.monotonic()
    with pytest.raises(h.HandshakeTimeout) as info:
        h.serve("127.0.0.1", 0, 2**20, time.monotonic() + 0.5)
    assert time.monotonic() - started < 5
    assert info.value.missing == list(range(1, h.SHOWN_MISSING + 1))
    assert info.value.missing_count == 2**20 - 1
    args = {"process_id": 0, "num_processes": 2**20,
            "coordinator_address": "127.0.0.1:1"}
    err = connect._timeout_error(args, 1, 0.5, info.value.missing,
                                 info.value.missing_count)
    assert "(and 1,048,565 more)" in str(err)
    assert len(str(err)) < 1000
