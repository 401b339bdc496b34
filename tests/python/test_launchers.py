"""Launcher detection: the same coordinator, count and id as JAX's own.

JAX's cluster classes (`jax._src.clusters`) read `os.environ`; each test
sets the variables a launcher sets and compares.
"""

import pytest
from jax._src.clusters import k8s_cluster, ompi_cluster, slurm_cluster

from kerasmesh import launchers
from kerasmesh import distributed as d
from kerasmesh.errors import KerasmeshError

# What `srun --ntasks=2` sets for its step on one node called localhost
# (the variables JAX and kerasmesh read, and some of the others).
SRUN = {
    "SLURM_JOB_ID": "1234", "SLURM_JOBID": "1234", "SLURM_STEP_ID": "0",
    "SLURM_STEP_NODELIST": "localhost", "SLURM_JOB_NODELIST": "localhost",
    "SLURM_NODELIST": "localhost", "SLURM_NTASKS": "2", "SLURM_NPROCS": "2",
    "SLURM_STEP_NUM_NODES": "1", "SLURM_NNODES": "1", "SLURM_NODEID": "0",
    "SLURM_STEP_NUM_TASKS": "2", "SLURM_TASKS_PER_NODE": "2",
    "SLURM_STEP_TASKS_PER_NODE": "2", "SLURMD_NODENAME": "localhost",
    "SLURM_PROCID": "1", "SLURM_LOCALID": "1", "SLURM_CPUS_ON_NODE": "2",
}
# What `mpirun -np 2 --mca oob_tcp_if_include lo` sets (Open MPI 4.1).
MPIRUN = {
    "OMPI_MCA_orte_hnp_uri": "3411542016.0;tcp://127.0.0.1:39123",
    "OMPI_COMM_WORLD_SIZE": "2", "OMPI_COMM_WORLD_RANK": "1",
    "OMPI_COMM_WORLD_LOCAL_RANK": "1", "OMPI_COMM_WORLD_LOCAL_SIZE": "2",
    "OMPI_UNIVERSE_SIZE": "2",
}
K8S = {"JOB_COMPLETION_INDEX": "1",
       "JAX_COORDINATOR_ADDRESS": "train-0.train:1234",
       "KERASMESH_NUM_PROCESSES": "2"}


def with_env(monkeypatch, env):
    for name in launchers.VARIABLES + ("OMPI_COMM_WORLD_LOCAL_SIZE",):
        monkeypatch.delenv(name, raising=False)
    for name, value in env.items():
        monkeypatch.setenv(name, value)


@pytest.mark.parametrize("env,cluster", [(SRUN, slurm_cluster.SlurmCluster),
                                         (MPIRUN, ompi_cluster.OmpiCluster)])
@pytest.mark.parametrize("port", [None, "23456"])
def test_detection_matches_jax(monkeypatch, env, cluster, port):
    env = dict(env, **({"JAX_COORDINATOR_PORT": port} if port else {}))
    with_env(monkeypatch, env)
    assert cluster.is_env_present()
    found = launchers.detect(env)
    assert found["coordinator_address"] == cluster.get_coordinator_address(
        None, port)
    assert found["num_processes"] == cluster.get_process_count() == 2
    assert found["process_id"] == cluster.get_process_id() == 1


def test_kubernetes_id_matches_jax(monkeypatch):
    with_env(monkeypatch, K8S)
    found = launchers.detect(K8S)
    assert found["launcher"] == "Kubernetes"
    assert found["process_id"] == k8s_cluster.K8sCluster.get_process_id()
    assert (found["coordinator_address"], found["num_processes"]) == \
        ("train-0.train:1234", 2)


def test_slurm_node_lists_give_the_first_node():
    assert launchers._first_node("node001") == "node001"
    assert launchers._first_node("node001,host2") == "node001"
    assert launchers._first_node("node[001-015],host2") == "node001"
    assert launchers._first_node("node[007,009]") == "node007"


def test_no_launcher_is_none():
    assert launchers.detect({"HOME": "/root"}) is None


def problem(env):
    with pytest.raises(KerasmeshError) as info:
        launchers.detect(env)
    e = info.value
    assert e.kind == "distributed_argument"
    return e.message + " " + " ".join(t for _, t in e.bullets)


def test_partial_launcher_variables_are_named():
    text = problem({"SLURM_PROCID": "0"})
    assert "Slurm" in text and "`SLURM_NTASKS`" in text
    assert "`SLURM_JOB_ID`" in text and "srun" in text
    text = problem({"OMPI_COMM_WORLD_RANK": "0"})
    assert "`OMPI_COMM_WORLD_SIZE`" in text
    text = problem({"JOB_COMPLETION_INDEX": "0"})
    assert "`JAX_COORDINATOR_ADDRESS`" in text
    assert "`KERASMESH_NUM_PROCESSES`" in text


def test_two_launchers_at_once_are_named():
    text = problem({**SRUN, **MPIRUN})
    assert "Slurm and Open MPI" in text
    assert "`SLURM_PROCID`" in text and "`OMPI_COMM_WORLD_RANK`" in text


@pytest.mark.parametrize("env,names", [
    (dict(SRUN, SLURM_PROCID="2"), ("`SLURM_PROCID`", "`SLURM_NTASKS`")),
    (dict(MPIRUN, OMPI_COMM_WORLD_RANK="5"), ("`OMPI_COMM_WORLD_RANK`",)),
    (dict(K8S, JOB_COMPLETION_INDEX="2"), ("`JOB_COMPLETION_INDEX`",)),
    (dict(SRUN, SLURM_NTASKS="two"), ("`SLURM_NTASKS`",)),
    (dict(SRUN, SLURM_PROCID="-1"), ("`SLURM_PROCID`",)),
])
def test_ids_outside_the_count_and_bad_numbers_are_named(env, names):
    text = problem(env)
    for name in names:
        assert name in text


def test_keras_variables_win_over_a_launcher():
    env = dict(SRUN, **{d.ENV_ADDRESSES: "127.0.0.1:5", d.ENV_NUM_PROCESSES:
                        "3", d.ENV_PROCESS_ID: "2"})
    args = d.resolve_arguments(environ=env)
    assert (args["coordinator_address"], args["num_processes"],
            args["process_id"]) == ("127.0.0.1:5", 3, 2)


def test_resolve_arguments_uses_the_launcher():
    args = d.resolve_arguments(environ=SRUN)
    assert args["launcher"] == "Slurm"
    assert args["coordinator_address"] == "localhost:62674"
    assert (args["num_processes"], args["process_id"]) == (2, 1)
