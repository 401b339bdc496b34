"""Launcher detection: the same coordinator, count and id as JAX's own.

JAX's cluster classes (`jax._src.clusters`) read `os.environ`; each test
sets the variables a launcher sets and compares.
"""

import zlib

import pytest
from jax._src.clusters import k8s_cluster, ompi_cluster, slurm_cluster

from kerasmesh.distributed import launchers
from kerasmesh.distributed import initialize as d
from kerasmesh.core.errors import KerasmeshError

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
# What `mpirun -np 2 --pmixmca ptl_base_if_include lo` sets (Open MPI 5.0,
# PRRTE and PMIx: no OMPI_MCA_orte_hnp_uri), for rank 1.
MPIRUN5 = {
    "OMPI_COMM_WORLD_SIZE": "2", "OMPI_COMM_WORLD_RANK": "1",
    "OMPI_COMM_WORLD_LOCAL_RANK": "1", "OMPI_COMM_WORLD_LOCAL_SIZE": "2",
    "OMPI_COMM_WORLD_NODE_RANK": "1", "OMPI_UNIVERSE_SIZE": "2",
    "OMPI_VERSION": "5.0.7", "PMIX_RANK": "1", "PMIX_HOSTNAME": "vm",
    "PMIX_NAMESPACE": "prterun-vm-17257@1",
    "PMIX_SERVER_URI2": "prterun-vm-17257@0.0;tcp4://127.0.0.1:56235",
    "PMIX_SERVER_URI21": "prterun-vm-17257@0.0;tcp4://127.0.0.1:56235",
    "PMIX_SERVER_URI3": "prterun-vm-17257@0.0;tcp4://127.0.0.1:56235",
    "PMIX_SERVER_URI4": "prterun-vm-17257@0.0;tcp4://127.0.0.1:56235",
    "PMIX_SERVER_URI41": "prterun-vm-17257@0.0;tcp4://127.0.0.1:56235",
}
# The port every process of MPIRUN5's job derives from its namespace.
MPIRUN5_PORT = zlib.crc32(b"prterun-vm-17257@1") % 4096 + 61440
K8S = {"JOB_COMPLETION_INDEX": "1",
       "JAX_COORDINATOR_ADDRESS": "train-0.train:1234",
       "KERASMESH_NUM_PROCESSES": "2"}


def with_env(monkeypatch, env):
    for name in launchers.VARIABLES + tuple(MPIRUN5):
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


def test_keras_variables_win_over_a_launcher_they_agree_with():
    env = dict(SRUN, **{d.ENV_ADDRESSES: "127.0.0.1:5", d.ENV_NUM_PROCESSES:
                        "2", d.ENV_PROCESS_ID: "1"})
    args = d.resolve_arguments(environ=env)
    assert (args["coordinator_address"], args["num_processes"],
            args["process_id"]) == ("127.0.0.1:5", 2, 1)


@pytest.mark.parametrize("env,var,value,theirs", [
    (SRUN, d.ENV_PROCESS_ID, "0", "SLURM_PROCID"),
    (MPIRUN, d.ENV_NUM_PROCESSES, "3", "OMPI_COMM_WORLD_SIZE"),
    (K8S, d.ENV_PROCESS_ID, "0", "JOB_COMPLETION_INDEX")])
def test_keras_variables_that_contradict_a_launcher_name_both(
        env, var, value, theirs):
    keras_env = {d.ENV_ADDRESSES: "127.0.0.1:5", d.ENV_NUM_PROCESSES: "2",
                 d.ENV_PROCESS_ID: "1", var: value}
    with pytest.raises(KerasmeshError) as e:
        d.resolve_arguments(environ=dict(env, **keras_env))
    assert e.value.kind == "distributed_argument"
    assert f"`{var}` and `{theirs}`" in e.value.message
    assert f"`{var}` is {value}; `{theirs}` is" in str(e.value)
    # Only one of them given, it still names the contradiction.
    with pytest.raises(KerasmeshError, match=theirs):
        d.resolve_arguments(environ=dict(env, **{var: value}))


def test_arguments_win_over_a_launcher_and_incomplete_ones_are_ignored():
    args = d.resolve_arguments("127.0.0.1:5", 3, 2, environ=SRUN)
    assert (args["num_processes"], args["process_id"]) == (3, 2)
    partial = {"SLURM_PROCID": "0", d.ENV_ADDRESSES: "127.0.0.1:5",
               d.ENV_NUM_PROCESSES: "2", d.ENV_PROCESS_ID: "1"}
    assert d.resolve_arguments(environ=partial)["process_id"] == 1


def test_resolve_arguments_uses_the_launcher():
    args = d.resolve_arguments(environ=SRUN)
    assert args["launcher"] == "Slurm"
    assert args["coordinator_address"] == "localhost:62674"
    assert (args["num_processes"], args["process_id"]) == (2, 1)


def test_open_mpi_5_is_detected_from_pmix():
    found = launchers.detect(MPIRUN5)
    assert found["launcher"] == "Open MPI"
    assert found["coordinator_address"] == f"127.0.0.1:{MPIRUN5_PORT}"
    assert (found["num_processes"], found["process_id"]) == (2, 1)
    assert "PMIX_SERVER_URI2" in found["variables"]
    assert "OMPI_MCA_orte_hnp_uri" not in found["variables"]


def test_open_mpi_5_gives_every_process_the_same_coordinator():
    rank0 = dict(MPIRUN5, OMPI_COMM_WORLD_RANK="0", PMIX_RANK="0")
    # A process on a second node: its PMIx server is that node's prted
    # (daemon 1), so the launcher's host comes from the namespace.
    other_node = dict(
        MPIRUN5, PMIX_SERVER_URI2="prterun-vm-17257@0.1;tcp4://10.0.0.2:4")
    addresses = {launchers.detect(env)["coordinator_address"]
                 for env in (rank0, MPIRUN5)}
    assert addresses == {f"127.0.0.1:{MPIRUN5_PORT}"}
    assert launchers.detect(other_node)["coordinator_address"] == \
        f"vm:{MPIRUN5_PORT}"
    dashed = dict(other_node, PMIX_NAMESPACE="prterun-node-7-1234@1")
    assert launchers.detect(dashed)["coordinator_address"].startswith(
        "node-7:")


def test_open_mpi_5_takes_the_jax_port_and_address_variables():
    env = dict(MPIRUN5, JAX_COORDINATOR_PORT="23456")
    assert launchers.detect(env)["coordinator_address"] == "127.0.0.1:23456"
    env = dict(MPIRUN5, JAX_COORDINATOR_ADDRESS="10.1.1.1:5000",
               PMIX_SERVER_URI2="prterun-vm-1@0.3;tcp4://10.0.0.2:4",
               PMIX_NAMESPACE="somewhere-else")
    assert launchers.detect(env)["coordinator_address"] == "10.1.1.1:5000"


def test_open_mpi_5_over_ipv6_brackets_the_host():
    env = dict(MPIRUN5,
               PMIX_SERVER_URI2="prterun-vm-17257@0.0;tcp6://[::1]:56235")
    assert launchers.detect(env)["coordinator_address"] == \
        f"[::1]:{MPIRUN5_PORT}"


def test_srun_with_pmix_is_slurm_not_open_mpi():
    env = dict(SRUN, PMIX_NAMESPACE="slurm.pmix.1234.0", PMIX_RANK="1",
               PMIX_SERVER_URI2="pmix-server.4242;tcp4://127.0.0.1:4")
    assert launchers.detect(env)["launcher"] == "Slurm"


@pytest.mark.parametrize("env,names", [
    ({k: v for k, v in MPIRUN5.items() if k != "PMIX_SERVER_URI2"},
     ("`PMIX_SERVER_URI2`",)),
    ({k: v for k, v in MPIRUN5.items() if k != "PMIX_NAMESPACE"},
     ("`PMIX_NAMESPACE`",)),
    (dict(MPIRUN5, PMIX_SERVER_URI2="nonsense"), ("`PMIX_SERVER_URI2`",)),
    (dict(MPIRUN5, PMIX_SERVER_URI2="prterun-vm-1@0.2;tcp4://10.0.0.2:4",
          PMIX_NAMESPACE="my-dvm"), ("`PMIX_NAMESPACE`",
                                     "`JAX_COORDINATOR_ADDRESS`")),
])
def test_incomplete_or_malformed_open_mpi_5_variables_are_named(env, names):
    text = problem(env)
    for name in names:
        assert name in text
