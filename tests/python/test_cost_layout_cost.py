"""Compiled pre-flight: abstract compiles against real training steps."""

import jax
import keras
import numpy as np
import pytest
from jax.sharding import NamedSharding, PartitionSpec

from kerasmesh.cost import layout_cost as cost
from small_models import mlp
from kerasmesh.cost import collectives
from remat_models import CPU_OPTIONS
from kerasmesh.plan import planner as plan
from kerasmesh.cost import deadline, step
from kerasmesh.core.errors import KerasmeshError


@pytest.fixture(scope="module")
def mesh():
    return keras.distribution.DeviceMesh(
        (2, 4), ("data", "model"), keras.distribution.list_devices())


def model_parallel(mesh):
    lm = keras.distribution.LayoutMap(mesh)
    lm[".*dense.*kernel"] = (None, "model")
    lm[".*dense.*bias"] = ("model",)
    return keras.distribution.ModelParallel(layout_map=lm,
                                            batch_dim_name="data")


def data_parallel():
    return keras.distribution.DataParallel(
        devices=keras.distribution.list_devices())


def collective_key(op):
    return (op["collective"], op["shapes"], op["groups"], op["axes"])


def real_step(dist, batch=16):
    """Train the MLP one step for real; its arrays and compiled step HLO.

    The step is Keras's own `train_step`, jitted as Keras's JAX trainer
    jits it (`make_train_function`: donated state, the state's shardings
    as output shardings) on the real, placed arrays, and compiled with
    kerasmesh's XLA options for the CPU (`target.Target`'s: as an
    accelerator would schedule it, its all-reduces apart).
    """
    rng = np.random.default_rng(3)
    x = rng.normal(size=(batch, 32)).astype("float32")
    y = rng.normal(size=(batch, 16)).astype("float32")
    with dist.scope():
        model = mlp()
        model.compile(optimizer="adam", loss="mse")
        model.fit(x, y, batch_size=batch, epochs=1, verbose=0)
        mesh = dist.device_mesh.backend_mesh
        batch_axis = PartitionSpec(dist.batch_dim_name)
        data = tuple(jax.device_put(a, NamedSharding(mesh, batch_axis))
                     for a in (x, y))
        state = model._get_jax_state(
            trainable_variables=True, non_trainable_variables=True,
            optimizer_variables=True, metrics_variables=True)
        step = jax.jit(model.train_step, donate_argnums=0,
                       out_shardings=(None,
                                      model._get_state_sharding_spec()))
        text = step.lower(state, data).compile(
            compiler_options=CPU_OPTIONS).as_text()
    return model, text


def device_bytes(variables):
    """Bytes device 0 holds of these placed variables."""
    first = keras.distribution.list_devices()[0]
    total = 0
    for v in variables:
        for shard in v.value.addressable_shards:
            if f"{shard.device.platform}:{shard.device.id}" == first:
                total += shard.data.nbytes
    return total


@pytest.mark.parametrize("layout", ["model_parallel", "data_parallel"])
def test_abstract_compile_matches_a_real_training_step(mesh, layout):
    dist = model_parallel(mesh) if layout == "model_parallel" \
        else data_parallel()
    result = cost.layout_cost(mlp, dist, 16, optimizer="adam", loss="mse")
    model, text = real_step(dist)

    # Weights and optimizer state: what device 0 holds after a real step.
    assert result["memory"]["weights"] == device_bytes(model.variables)
    assert result["memory"]["optimizer"] == \
        device_bytes(model.optimizer.variables)
    # ... and the planner's figures (one placement code path).
    layout_map, batch_axis, _ = cost.distribution_layout(dist)
    planned = plan.plan_layout(mlp, layout_map, 16, "adam",
                               batch_axis)["summary"]
    assert result["memory"]["weights"] == planned["device_weights"]
    assert result["memory"]["optimizer"] == planned["device_optimizer"]

    # The same collectives: kinds, shapes, device groups and mesh axes.
    sizes = [int(s) for s in dist.device_mesh.shape]
    names = list(dist.device_mesh.axis_names)
    real = collectives.parse_collectives(text, sizes, names)
    assert real, "the real step has collectives"
    assert sorted(map(str, map(collective_key, result["ops"]))) == \
        sorted(map(str, map(collective_key, real)))


@pytest.mark.parametrize("layout", ["model_parallel", "data_parallel"])
def test_a_quick_compile_reports_the_same_memory_and_collectives(mesh,
                                                                 layout):
    dist = model_parallel(mesh) if layout == "model_parallel" \
        else data_parallel()
    default = cost.layout_cost(mlp, dist, 16, "adam", "mse")
    quick = cost.layout_cost(mlp, dist, 16, "adam", "mse", quick=True)
    assert quick["xla"] == default["xla"]
    assert quick["ops"] == default["ops"]
    assert quick["collectives"] == default["collectives"]


def test_all_reduce_traffic_follows_the_layouts_arithmetic(mesh):
    # Parameters of the MLP: 32 * 64 + 64 + 64 * 16 + 16 = 3152 floats,
    # P = 12608 bytes. Data parallel over 8 devices all-reduces every
    # gradient, P bytes, and the scalar loss (4 bytes) over the "batch"
    # axis. On the 2 x 4 mesh every kernel and bias is split 4 ways over
    # "model", so each device all-reduces its quarter of the gradients,
    # P / 4 bytes, and the loss over "data". The ratio of gradient traffic
    # is the size of the "model" axis: 4.
    params = 32 * 64 + 64 + 64 * 16 + 16
    p_bytes = 4 * params
    dp = cost.layout_cost(mlp, data_parallel(), 16, "adam", "mse")
    mp = cost.layout_cost(mlp, model_parallel(mesh), 16, "adam", "mse")

    def all_reduce(result, axes):
        c = result["collectives"]
        return sum(b for k, a, b in zip(c["collective"], c["axes"], c["bytes"])
                   if k == "all-reduce" and a == axes)

    assert all_reduce(dp, "batch") == p_bytes + 4
    assert all_reduce(mp, "data") == p_bytes / 4 + 4
    assert (all_reduce(dp, "batch") - 4) / (all_reduce(mp, "data") - 4) == 4
    # Model parallelism adds traffic over "model" instead: the activations
    # of the 64-unit layer, 8 rows per device, are gathered (8 * 64 * 4
    # bytes), their gradients reduce-scattered back to each device's
    # columns (an all-reduce the devices slice), and the loss's per-row
    # sums all-reduced.
    assert all_reduce(mp, "model") == 8 * 4

    def over_model(kind):
        return [b for k, a, b in zip(*(mp["collectives"][c] for c in (
            "collective", "axes", "bytes"))) if k == kind and a == "model"]

    assert over_model("all-gather") == [8 * 64 * 4]
    assert over_model("reduce-scatter") == [8 * 64 * 4]


def test_the_planners_errors_come_before_any_compile(mesh):
    def odd():
        return keras.Sequential([keras.Input((32,)), keras.layers.Dense(6)])

    with pytest.raises(KerasmeshError) as e:
        cost.layout_cost(odd, model_parallel(mesh), 16)
    assert e.value.kind == "layout_divisibility"
    with pytest.raises(KerasmeshError) as e:
        cost.layout_cost(mlp, model_parallel(mesh), 15)
    assert e.value.kind == "batch_size"


def test_a_loss_that_does_not_fit_the_outputs_is_a_loss_error(mesh):
    with pytest.raises(KerasmeshError) as e:
        cost.layout_cost(mlp, model_parallel(mesh), 16, loss=["mse", "mse"])
    assert e.value.kind == "loss"

    def scalar_out():
        inputs = keras.Input((32,))
        return keras.Model(inputs, keras.layers.Dense(4)(inputs))

    with pytest.raises(KerasmeshError) as e:
        cost.layout_cost(scalar_out, data_parallel(), 16,
                         loss="sparse_categorical_crossentropy_typo")
    assert e.value.kind == "loss"


def test_backbones_without_a_loss_use_the_stand_in(mesh):
    def backbone():
        ids = keras.Input((None,), dtype="int32", name="token_ids")
        mask = keras.Input((None,), dtype="int32", name="padding_mask")
        x = keras.layers.Embedding(100, 8, name="embedding")(ids)
        x = x * keras.ops.expand_dims(keras.ops.cast(mask, "float32"), -1)
        return keras.Model({"token_ids": ids, "padding_mask": mask},
                           keras.layers.Dense(8, name="dense")(x))

    with pytest.raises(KerasmeshError) as e:
        cost.layout_cost(backbone, data_parallel(), 8)
    assert e.value.kind == "input_shapes"
    with pytest.raises(KerasmeshError) as e:
        cost.layout_cost(backbone, data_parallel(), 8,
                         input_shapes={"tokens": [12]})
    assert e.value.kind == "input_shapes"
    result = cost.layout_cost(backbone, data_parallel(), 8, input_shapes={
        "token_ids": [12], "padding_mask": [12]})
    assert result["loss"] == step.STAND_IN_LOSS
    assert sorted(result["inputs"]["name"]) == ["padding_mask", "token_ids"]
    assert [s[1] for s in result["inputs"]["shape"]] == [12.0, 12.0]
    # One device's batch: 1 row of 12 int32 ids and mask values.
    assert result["memory"]["inputs"] == 2 * 12 * 4


def test_a_compile_past_the_timeout_is_a_timeout_error(mesh):
    with pytest.raises(KerasmeshError) as e:
        cost.layout_cost(mlp, model_parallel(mesh), 16, timeout=1e-4)
    assert e.value.kind == "timeout"
    assert deadline.wait_for_compiles() >= 0
    assert not deadline.PENDING


def test_the_book_model_costs_without_allocating(mesh):
    def book():
        inputs = keras.Input((16000,))
        hidden = keras.layers.Dense(64000, activation="relu")(inputs)
        return keras.Model(inputs, keras.layers.Dense(8000)(hidden))

    result = cost.layout_cost(book, model_parallel(mesh), 64, "adam", "mse")
    params = 16000 * 64000 + 64000 + 64000 * 8000 + 8000
    assert result["memory"]["weights"] == params * 4 / 4
    # Adam: two slots per weight, plus the iteration and learning rate.
    assert result["memory"]["optimizer"] == 2 * params + 8
    data = [b for k, a, b in zip(*(result["collectives"][c] for c in (
        "collective", "axes", "bytes"))) if k == "all-reduce" and a == "data"]
    assert data == [params + 4]


# -- parsing HLO ------------------------------------------------------------

def test_multi_output_models_take_one_loss_per_output(mesh):
    def two_heads():
        inputs = keras.Input((32,))
        hidden = keras.layers.Dense(64, name="dense")(inputs)
        return keras.Model(inputs, [keras.layers.Dense(8, name="a")(hidden),
                                    keras.layers.Dense(4, name="b")(hidden)])

    result = cost.layout_cost(two_heads, model_parallel(mesh), 16, "sgd",
                              ["mse", "mae"])
    assert result["loss"] == "mse, mae"
    # Device 0's batch: 8 rows of 32 inputs, and targets of 8 and 4.
    assert result["memory"]["inputs"] == 8 * (32 + 8 + 4) * 4


def test_a_compiled_model_lends_its_optimizer_and_loss(mesh):
    model = mlp()
    model.compile(optimizer="adam", loss="mse")
    result = cost.layout_cost(model, data_parallel(), 16)
    assert result["loss"] == "mse"
    assert result["plan"]["optimizer"] == "Adam"
    # The model's own optimizer is not built by costing it.
    assert not model.optimizer.built


def dict_heads():
    """Two outputs in a dict whose keys are not the layers' names (Keras
    orders them by key: "label" before "score")."""
    inputs = keras.Input((32,), name="x")
    return keras.Model(inputs, {
        "score": keras.layers.Dense(8, name="a")(inputs),
        "label": keras.layers.Dense(4, name="b")(inputs)})


@pytest.mark.parametrize("loss", [{"score": "mse", "label": "mae"},
                                  {"label": "mae", "score": "mse"}])
def test_a_dict_output_model_takes_a_loss_per_output_key(mesh, loss):
    result = cost.layout_cost(dict_heads, model_parallel(mesh), 16, "sgd",
                              loss)
    assert result["loss"] == "mae, mse"
    assert result["memory"]["inputs"] == 8 * (32 + 8 + 4) * 4


def test_a_dict_output_model_compiled_by_keras_costs_with_its_loss(mesh):
    model = dict_heads()
    model.compile(optimizer="sgd", loss={"score": "mse", "label": "mae"})
    x = np.zeros((16, 32), "float32")
    model.fit(x, {"score": np.zeros((16, 8)), "label": np.zeros((16, 4))},
              verbose=0)
    result = cost.layout_cost(model, model_parallel(mesh), 16)
    assert result["loss"] == "mae, mse"


def test_a_loss_for_an_output_the_model_lacks_is_a_loss_error(mesh):
    with pytest.raises(KerasmeshError) as info:
        cost.layout_cost(dict_heads, model_parallel(mesh), 16, "sgd",
                         {"score": "mse", "labels": "mae"})
    assert info.value.kind == "loss"
    assert '"label"' in str(info.value)


def test_targets_under_mixed_bfloat16_are_fed_as_float32(mesh):
    before = keras.config.dtype_policy()
    keras.config.set_dtype_policy("mixed_bfloat16")
    try:
        result = cost.layout_cost(mlp, model_parallel(mesh), 16, "sgd",
                                  "mse")
    finally:
        keras.config.set_dtype_policy(before)
    # The MLP's output is bfloat16, but Keras casts float targets to
    # floatx: 8 rows of 32 inputs and 16 targets, 4 bytes each.
    assert result["memory"]["inputs"] == 8 * (32 + 16) * 4


def topology(nodes=2, per_node=4):
    """Nodes of H100-like devices, as R's device_topology() sends them."""
    return {"nodes": nodes, "devices_per_node": per_node, "memory": 80e9,
            "peak_flops": {"bfloat16": 989e12, "float32": 495e12},
            "intra_node_bandwidth": 450e9, "inter_node_bandwidth": 50e9,
            "intra_node_latency": 3.4e-6, "inter_node_latency": 14e-6,
            "efficiency": 0.4, "name": "test"}


@pytest.mark.parametrize("compiler", ["gpu", "cpu"])
def test_a_topology_adds_the_modeled_time_of_the_step(mesh, monkeypatch,
                                                      compiler):
    from kerasmesh.cost import target

    if compiler == "cpu":
        monkeypatch.setattr(target, "gpu_compiler", lambda: None)
    elif target.gpu_compiler() is None:
        pytest.skip("XLA's GPU compiler (jax-cuda12-plugin) not installed")
    result = cost.layout_cost(mlp, model_parallel(mesh), 16, "adam", "mse",
                              topology=topology())
    t = result["time"]
    assert "time" not in cost.layout_cost(mlp, model_parallel(mesh), 16,
                                          "adam", "mse")
    assert t["compute_dtype"] == "float32"
    assert t["flop_rate"] == pytest.approx(495e12 * 0.4)
    assert t["compute"] + t["recompute"] == \
        pytest.approx(sum(t["parts"].values()))
    assert set(t["communication"]["axes"]) <= \
        {"+".join(op["axes"]) for op in result["ops"]}
    # The device waits for what compute does not hide.
    assert t["total"] == pytest.approx(
        t["compute"] + t["recompute"] + sum(t["communication"]["exposed"]))
    assert t["overlap"] == ("class" if compiler == "cpu" else "schedule")
    assert result["compiled_for"]["compiler_missing"] == (compiler == "cpu")


def test_a_topology_of_another_device_count_fails_before_tracing(
        mesh, monkeypatch):
    monkeypatch.setattr(cost, "_trace", lambda *a: pytest.fail("traced"))
    with pytest.raises(KerasmeshError) as e:
        cost.layout_cost(mlp, model_parallel(mesh), 16, "adam", "mse",
                         topology=topology(nodes=4, per_node=8))
    assert e.value.kind == "topology_devices"
    assert "32 devices (4 nodes of 8)" in str(e.value)


def test_a_topology_without_the_models_dtype_fails_before_compiling(
        mesh, monkeypatch):
    monkeypatch.setattr(cost, "_compile", lambda *a: pytest.fail("compiled"))
    topo = topology() | {"peak_flops": {"bfloat16": 989e12}}
    with pytest.raises(KerasmeshError) as e:
        cost.layout_cost(mlp, model_parallel(mesh), 16, "adam", "mse",
                         topology=topo)
    assert e.value.kind == "topology"
    assert "float32" in str(e.value)
