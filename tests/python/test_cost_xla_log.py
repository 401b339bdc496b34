"""XLA's C++ log kept off the console during compiles, and read back."""

import os
import threading

import jax
import jax.numpy as jnp
import keras
import numpy as np
import pytest
from jax.sharding import Mesh, NamedSharding, PartitionSpec

from kerasmesh.cost import layout_cost as cost
from kerasmesh.cost import xla_log
from small_models import mlp

NEW = ("W1202 07:36:10.094396    1361 spmd_partitioner.cc:656] [SPMD] "
       "Involuntary full rematerialization. The compiler cannot go from "
       "sharding {devices=[2,1,4]<=[4,2]T(1,0)} to {devices=[1,8,1]<=[8]} "
       "efficiently for HLO operation %add.2 = f32[8,16,4]{2,1,0} "
       "add(%param, %param), sharding={devices=[2,1,4]<=[4,2]T(1,0)}, "
       'metadata={op_name="jit(f)/add" stack_frame_id=2}. As the last '
       "resort, SPMD will replicate the tensor and then partition it.")
OLD = ("E0531 10:54:04.832741 2609008 spmd_partitioner.cc:569] [spmd] "
       "Involuntary full rematerialization. The compiler was not able to go "
       "from sharding {maximal device=0} to {devices=[4,1]<=[4]} without "
       "doing a full rematerialization of the tensor for HLO operation: "
       "%get-tuple-element = f32[257152,2048]{1,0} get-tuple-element(%t).")


def test_what_is_written_to_descriptor_2_is_captured_not_shown(capfd):
    with xla_log.captured() as log:
        os.write(2, b"from C++\n")
    os.write(2, b"after\n")
    assert log.text == "from C++\n"
    assert capfd.readouterr().err == "after\n"


def test_descriptor_2_is_back_after_an_error(capfd):
    with pytest.raises(RuntimeError):
        with xla_log.captured():
            os.write(2, b"lost\n")
            raise RuntimeError("compile failed")
    os.write(2, b"shown\n")
    assert capfd.readouterr().err == "shown\n"


def test_nested_and_concurrent_captures_share_one_redirection(capfd):
    before = os.fstat(2).st_ino
    seen = {}

    def compile_in_thread(name):
        with xla_log.captured() as log:
            os.write(2, f"{name}\n".encode())
        seen[name] = log.text

    with xla_log.captured() as outer:
        threads = [threading.Thread(target=compile_in_thread, args=(n,))
                   for n in ("a", "b", "c")]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        with xla_log.captured() as inner:
            os.write(2, b"inner\n")
    assert os.fstat(2).st_ino == before
    assert inner.text == "inner\n"
    assert all(f"{n}\n" in seen[n] for n in "abc")
    assert sorted(outer.text.split()) == ["a", "b", "c", "inner"]
    assert capfd.readouterr().err == ""


def test_both_forms_of_xlas_resharding_warning_are_read():
    parsed = xla_log.parse("\n".join([
        NEW, OLD, "", "WARNING: All log messages before "
        "absl::InitializeLog() is called are written to STDERR",
        "I0000 something else"]))
    rows = parsed["reshardings"]
    assert rows["instruction"] == ["add.2", "get-tuple-element"]
    assert rows["shape"] == ["f32[8,16,4]", "f32[257152,2048]"]
    assert rows["op_name"] == ["jit(f)/add", ""]
    assert rows["source"] == ["{devices=[2,1,4]<=[4,2]T(1,0)}",
                              "{maximal device=0}"]
    assert rows["target"] == ["{devices=[1,8,1]<=[8]}",
                              "{devices=[4,1]<=[4]}"]
    assert parsed["log"] == ["I0000 something else"]
    assert parsed["log_lines"] == 1


def test_a_jax_compile_that_reshards_is_caught_in_full(capfd):
    # openxla/xla#15207: a sharding XLA can only reach by replicating.
    mesh = Mesh(np.asarray(jax.devices()).reshape((4, 2)), ("x", "y"))
    to = NamedSharding(mesh, PartitionSpec(None, ("x", "y"), None))
    start = NamedSharding(mesh, PartitionSpec("y", None, "x"))

    def f(a, b, c):
        return c + jax.lax.with_sharding_constraint(a + b, to)

    spec = [jax.ShapeDtypeStruct((16, 16, 16), jnp.float32, sharding=s)
            for s in (start, start, to)]
    with xla_log.captured() as log:
        jax.jit(f, out_shardings=to).lower(*spec).compile()
    rows = xla_log.parse(log.text)["reshardings"]
    assert len(rows["instruction"]) >= 1
    assert "Involuntary" not in capfd.readouterr().err


def test_a_cost_reports_xlas_reshardings_and_prints_nothing(capfd):
    keras_hub = pytest.importorskip("keras_hub")
    mesh = keras.distribution.DeviceMesh(
        (2, 4), ("batch", "model"), keras.distribution.list_devices())
    lm = keras.distribution.LayoutMap(mesh)
    # The query's head dimension split: the rotary embedding's halves
    # can only be resharded by replicating them.
    lm[".*query.*kernel"] = (None, None, "model")
    d = keras.distribution.ModelParallel(layout_map=lm, batch_dim_name="batch")
    result = cost.layout_cost(
        lambda: keras_hub.models.LlamaBackbone(
            vocabulary_size=256, num_layers=1, num_query_heads=8,
            num_key_value_heads=4, hidden_dim=32, intermediate_dim=64),
        d, 8, "adam", None, {"token_ids": [16], "padding_mask": [16]})
    rows = result["reshardings"]
    assert len(rows["instruction"]) >= 1
    assert any("rotary" in n for n in rows["op_name"])
    assert "Involuntary" not in capfd.readouterr().err


def test_a_cost_of_a_clean_layout_reports_no_reshardings():
    d = keras.distribution.DataParallel(
        devices=keras.distribution.list_devices())
    result = cost.layout_cost(mlp, d, 16, "sgd", "mse")
    assert result["reshardings"]["instruction"] == []
