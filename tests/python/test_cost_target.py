"""Which compiler a cost uses: XLA's GPU compiler for the GPUs a topology
names, without them, where it is installed; the CPU compiler, with its
corrections, otherwise."""

import os

import jax
import keras
import numpy as np
import pytest

from kerasmesh.core import kinds
from kerasmesh.core.errors import KerasmeshError
from kerasmesh.cost import collectives, hlo, target
from kerasmesh.cost import layout_cost as cost
from kerasmesh.cost.attention import BLOCKS, CUDNN
from kerasmesh.cost.deadline import MEMORY_SCHEDULE
from kerasmesh.cost.gpu_targets import SPECS
from kerasmesh.mesh.data_parallel import data_parallel_on
from kerasmesh.topology.machine import as_topology

H100 = {"nodes": 1, "devices_per_node": 8, "memory": 80e9,
        "peak_flops": {"bfloat16": 989e12, "float32": 495e12},
        "intra_node_bandwidth": 370e9, "inter_node_bandwidth": 47e9,
        "all_reduce_bandwidth": 480e9, "memory_bandwidth": 3.35e12,
        "name": "h100-sxm-80gb"}


def gpu_compiler_or_skip():
    """Skip where XLA's GPU compiler is not installed (it is optional), but
    not where the checks require it (`KERASMESH_REQUIRE_GPU_COMPILER`)."""
    if target.gpu_compiler() is None:
        if os.environ.get("KERASMESH_REQUIRE_GPU_COMPILER") == "true":
            pytest.fail("XLA's GPU compiler (jax-cuda12-plugin) is required "
                        "here and not installed")
        pytest.skip("XLA's GPU compiler (jax-cuda12-plugin) not installed")


def test_without_a_topology_the_cpu_compiles_with_its_corrections(mesh):
    t = target.choose(None, mesh)
    assert (t.kind, t.label, t.platform) == (target.CPU, "CPU (XLA CPU)",
                                             "cpu")
    assert t.retypes_bfloat16 and t.overlaps_by_class
    assert t.attention == BLOCKS
    assert MEMORY_SCHEDULE.items() <= t.compile_options().items()
    assert t.retarget("anything") == "anything"


def test_a_gpu_preset_compiles_for_that_gpu_without_one(mesh):
    gpu_compiler_or_skip()
    t = target.choose(as_topology(H100), mesh)
    assert t.kind == target.GPU_DEVICELESS
    assert t.label == "H100 SXM 80GB (XLA GPU, deviceless)"
    assert (t.preset, t.nearest, t.compiler_missing) == \
        ("h100-sxm-80gb", False, False)
    assert not t.retypes_bfloat16 and not t.overlaps_by_class
    assert t.attention == CUDNN and t.compile_options() == {}


def test_custom_hardware_compiles_as_the_nearest_preset(mesh):
    gpu_compiler_or_skip()
    custom = as_topology(H100 | {"name": "custom", "memory": 40e9,
                                 "memory_bandwidth": 1.5e12,
                                 "peak_flops": {"bfloat16": 300e12}})
    t = target.choose(custom, mesh)
    assert t.preset == "a100-sxm-80gb" and t.nearest
    assert t.label == "custom hardware as A100 SXM 80GB (XLA GPU, deviceless)"
    # Its own memory and bandwidth are written into the target.
    assert "device_memory_size: 40000000000" in t.config
    assert "memory_bandwidth: 1500000000000" in t.config


def test_without_the_gpu_compiler_the_cpu_stands_in_and_says_so(
        mesh, monkeypatch):
    monkeypatch.setattr(target, "gpu_compiler", lambda: None)
    t = target.choose(as_topology(H100), mesh)
    assert t.kind == target.CPU and t.compiler_missing


def test_a_gpu_compiler_of_another_version_is_an_error_naming_both(
        monkeypatch):
    from importlib import metadata

    import jaxlib

    real = metadata.version
    monkeypatch.setattr(
        metadata, "version",
        lambda name: "0.0.1" if name == "jax-cuda12-plugin" else real(name))
    with pytest.raises(KerasmeshError) as e:
        target.gpu_compiler()
    assert e.value.kind == kinds.GPU_COMPILER
    assert "0.0.1" in str(e.value) and jaxlib.__version__ in str(e.value)


def test_retargeting_keeps_the_mesh_its_rules_and_each_devices_rank(mesh):
    gpu_compiler_or_skip()
    order = [0, 4, 1, 5, 2, 6, 3, 7]
    devices = np.array(keras.distribution.list_devices())[order]
    mixed = keras.distribution.DeviceMesh((2, 4), ("data", "model"),
                                          devices.reshape(2, 4))
    lm = keras.distribution.LayoutMap(mixed)
    lm[".*kernel"] = (None, "model")
    dist = keras.distribution.ModelParallel(layout_map=lm,
                                            batch_dim_name="data")
    t = target.choose(as_topology(H100 | {"nodes": 2,
                                          "devices_per_node": 4}), mixed)
    moved = t.retarget(dist)
    new = moved.device_mesh
    assert tuple(new.shape) == (2, 4)
    assert list(new.axis_names) == ["data", "model"]
    placed = np.asarray(new.backend_mesh.devices).flatten()
    assert [d.id for d in placed] == order
    assert {str(d.platform) for d in placed} == {"gpu"}
    assert moved._layout_map[".*kernel"].axes == (None, "model")
    assert moved.batch_dim_name == "data"


def test_a_cuda_platform_jax_could_not_start_is_a_gpu_compiler_error(
        mesh, monkeypatch):
    from jax.experimental import topologies

    def no_cuda(**kwargs):
        raise NotImplementedError("topology not implemented for cuda")

    monkeypatch.setattr(topologies, "get_topology_desc", no_cuda)
    target._devices.cache_clear()
    with pytest.raises(KerasmeshError) as e:
        target._devices("h100", 1, 8)
    target._devices.cache_clear()
    assert e.value.kind == kinds.GPU_COMPILER
    assert "before importing Keras" in str(e.value)


def test_data_parallel_over_a_mesh_of_two_axes_is_retargeted(mesh):
    gpu_compiler_or_skip()
    dist = data_parallel_on(mesh, auto_shard_dataset=False)
    t = target.choose(as_topology(H100 | {"nodes": 1,
                                          "devices_per_node": 8}), mesh)
    moved = t.retarget(dist)
    assert tuple(moved.device_mesh.shape) == tuple(mesh.shape)
    assert moved.batch_dim_name == mesh.axis_names[0]
    assert moved.auto_shard_dataset is False
    assert {str(d.platform) for d in np.asarray(
        moved.device_mesh.backend_mesh.devices).flatten()} == {"gpu"}


def llama():
    """A small Llama-3 backbone in float32 (Keras and kerasmesh trace its
    attention alike: GPUs fuse only half precision)."""
    from remat_models import hub_backbone

    return hub_backbone("llama", 2)


def llama_layout(mesh):
    lm = keras.distribution.LayoutMap(mesh)
    lm[".*feedforward_(intermediate|gate)_dense.kernel"] = ("data", "model")
    lm[".*feedforward_output_dense.kernel"] = ("model", "data")
    lm[".*query.kernel"] = (None, "model", None)
    return keras.distribution.ModelParallel(layout_map=lm,
                                            batch_dim_name="data")


def keras_gpu_step(batch, length):
    """Keras's own training step for `llama()`, compiled by XLA's GPU
    compiler for 8 H100s without them: the model built on the host, its
    state as abstract arrays laid out as the distribution says over the
    compile-only devices, jitted as Keras's JAX trainer jits it (donated
    state, its shardings as the output's)."""
    from jax.sharding import NamedSharding, PartitionSpec

    devices = target._devices(SPECS["h100-sxm-80gb"].config(), 1, 8)
    mesh = keras.distribution.DeviceMesh((2, 4), ("data", "model"),
                                         np.array(devices).reshape(2, 4))
    dist = llama_layout(mesh)
    model = llama()
    model.compile(optimizer="adam", loss="mse")
    tokens = np.zeros((batch, length), "int32")
    x = {"token_ids": tokens, "padding_mask": tokens}
    model._symbolic_build(data_batch=(x, np.zeros((batch, length, 32),
                                                    "float32")))
    model._get_jax_state(
        trainable_variables=True, non_trainable_variables=True,
        optimizer_variables=True, metrics_variables=True)

    def spec(value, layout):
        sharding = NamedSharding(mesh.backend_mesh, PartitionSpec()) \
            if layout is None else layout.backend_layout
        return jax.ShapeDtypeStruct(value.shape, value.dtype,
                                    sharding=sharding)

    variables = (model.trainable_variables, model.non_trainable_variables,
                 model.optimizer.variables, model.metrics_variables)
    # Adam's slots, each laid out as the variable it was made for.
    opt = model.optimizer
    slots = {id(s): v for part in (opt._momentums, opt._velocities)
             for v, s in zip(opt._trainable_variables, part)}
    abstract = tuple(
        [spec(v, dist.get_variable_layout(slots.get(id(v), v)))
         for v in part] for part in variables)
    data = jax.tree.map(
        lambda a: jax.ShapeDtypeStruct(a.shape, a.dtype, sharding=(
            dist.get_data_layout(a.shape).backend_layout)),
        (x, np.zeros((batch, length, 32), "float32")))
    shardings = tuple([a.sharding for a in part] for part in abstract)
    with dist.scope():
        step = jax.jit(model.train_step, donate_argnums=0,
                       out_shardings=(None, shardings))
        return step.lower(abstract, data).compile(), dist


def test_an_h100_cost_has_the_memory_and_collectives_xla_gives_keras(
        mesh):
    # The cost of a Llama step on an H100 topology, against XLA's own GPU
    # compile of Keras's training step for the same layout.
    gpu_compiler_or_skip()
    result = cost.layout_cost(llama, llama_layout(mesh), 8, "adam", "mse",
                              input_shapes={"token_ids": 128,
                                            "padding_mask": 128},
                              topology=H100)
    assert result["compiled_for"]["label"] == \
        "H100 SXM 80GB (XLA GPU, deviceless)"
    compiled, _ = keras_gpu_step(8, 128)
    stats = compiled.memory_analysis()
    # The step's state and batch: the same bytes on each device.
    assert result["xla"]["argument"] == pytest.approx(
        stats.argument_size_in_bytes, rel=0.01)
    # Temporaries: Keras's step also tracks its loss and metrics.
    assert result["xla"]["temp"] == pytest.approx(
        stats.temp_size_in_bytes, rel=0.1)
    # The same collectives: kinds, shapes and mesh axes.
    theirs = collectives.parse_collectives(hlo.parse(compiled.as_text()),
                                           [2, 4], ["data", "model"])

    def key(op):
        return (op["collective"], op["axes"], sorted(map(str, op["shapes"])))

    ours = sorted(map(str, map(key, result["ops"])))
    assert ours == sorted(map(str, map(key, theirs)))
    # and they differ from the CPU compiler's own.
    on_cpu = cost.layout_cost(llama, llama_layout(mesh), 8, "adam", "mse",
                              input_shapes={"token_ids": 128,
                                            "padding_mask": 128})
    assert on_cpu["compiled_for"]["label"] == "CPU (XLA CPU)"
    assert sorted(map(str, map(key, on_cpu["ops"]))) != ours
