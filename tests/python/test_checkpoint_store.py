"""Sharded checkpoints: save on one mesh, restore onto another, and the
steps that must not restore (unfinished, truncated)."""

import os
import shutil

import keras
import numpy as np
import pytest

from checkpoint_models import build, data, values
from kerasmesh.checkpoint import restore as cr
from kerasmesh.checkpoint import store as ck
from kerasmesh.core.errors import KerasmeshError
from test_checkpoint_files import orbax_step


@pytest.fixture()
def trained(tmp_path, distribution):
    """A model trained on a 2x4 mesh and saved at steps 4 and 8."""
    distribution((2, 4))
    model = build()
    x, y = data()
    model.fit(x, y, epochs=1, batch_size=16, shuffle=False, verbose=0)
    ck.save(model, str(tmp_path))
    model.fit(x, y, epochs=1, batch_size=16, shuffle=False, verbose=0)
    ck.save(model, str(tmp_path))
    return model, str(tmp_path)


def test_restore_onto_another_mesh_is_exact(trained, distribution):
    model, path = trained
    distribution((8, 1))
    fresh = build(seed=99)
    result = cr.restore(fresh, path)
    assert result["step"] == 8
    before, after = values(model), values(fresh)
    assert before.keys() == after.keys()
    for k in before:
        assert np.array_equal(before[k], after[k]), k
    kernel = fresh.trainable_variables[0].value
    assert kernel.sharding.mesh.devices.shape == (8, 1)
    assert int(fresh.optimizer.iterations.numpy()) == 8


def test_info_lists_steps_variables_and_layouts(trained):
    _, path = trained
    info = cr.info(path)
    assert info["steps"]["step"] == [4, 8]
    assert info["steps"]["complete"] == [True, True]
    assert info["last_complete"] is True
    assert info["step"] == 8
    v = info["variables"]
    i = v["key"].index("trainable_variables/sequential/dense/kernel")
    assert v["shape"][i] == [32, 64]
    assert v["axes"][i] == [None, "model"]
    assert v["mesh_shape"][i] == [2, 4]
    assert v["mesh_axes"][i] == ["data", "model"]
    assert any(k.startswith("optimizer_variables/") for k in v["key"])


def test_truncated_step_is_incomplete_and_the_previous_restores(
        trained, distribution):
    model, path = trained
    data_dir = os.path.join(path, "8", "pytree", "d")
    shutil.rmtree(data_dir)
    info = cr.info(path)
    assert info["steps"]["complete"] == [True, False]
    assert "missing" in info["steps"]["problem"][1]
    assert info["last_complete"] is False
    assert info["step"] == 4
    distribution((8, 1))
    fresh = build(seed=99)
    assert cr.restore(fresh, path)["step"] == 4
    assert int(fresh.optimizer.iterations.numpy()) == 4
    with pytest.raises(KerasmeshError) as e:
        cr.restore(fresh, path, step=8)
    assert e.value.kind == "checkpoint_incomplete"


def test_unfinished_write_is_incomplete(trained):
    _, path = trained
    shutil.copytree(os.path.join(path, "8"),
                    os.path.join(path, "12.orbax-checkpoint-tmp-1"))
    info = cr.info(path)
    assert info["steps"]["step"] == [4, 8, 12]
    assert info["steps"]["complete"] == [True, True, False]
    assert info["step"] == 8


def test_bad_input_names_the_variable_and_overwrites_nothing(
        trained, tmp_path, distribution):
    _, path = trained
    distribution((8, 1))
    other = build(units=48, seed=3)
    before = values(other)
    with pytest.raises(KerasmeshError) as e:
        cr.restore(other, path)
    assert e.value.kind == "checkpoint_shape"
    assert "sequential/dense/kernel" in e.value.message
    after = values(other)
    assert all(np.array_equal(before[k], after[k]) for k in before)

    renamed = keras.Sequential([
        keras.Input((32,)), keras.layers.Dense(64, name="other"),
        keras.layers.Dense(16, name="dense_1")], name="sequential")
    with pytest.raises(KerasmeshError) as e:
        cr.restore(renamed, path)
    assert e.value.kind == "checkpoint_variables"
    assert "sequential/dense/" in str(e.value)

    with pytest.raises(KerasmeshError) as e:
        cr.restore(other, str(tmp_path / "nothing"))
    assert e.value.kind == "checkpoint_directory"


def test_saving_a_step_twice_needs_overwrite(trained):
    model, path = trained
    with pytest.raises(KerasmeshError) as e:
        ck.save(model, path)
    assert e.value.kind == "checkpoint_exists"
    # Said of the step as it is found without checksums: saved, not
    # "complete" (a damaged file of the same size is found later).
    assert "holds step 8, saved by kerasmesh." in str(e.value)
    assert ck.save(model, path, overwrite=True)["step"] == 8


def test_restore_checks_dtypes_and_names_both(trained, distribution):
    _, path = trained
    distribution((8, 1))
    keras.utils.set_random_seed(3)
    half = keras.Sequential([
        keras.Input((32,)),
        keras.layers.Dense(64, activation="relu", name="dense",
                           dtype="float16"),
        keras.layers.Dense(16, name="dense_1")], name="sequential")
    half.compile(optimizer=keras.optimizers.Adam(0.01, name="adam"),
                 loss="mse")
    before = values(half)
    with pytest.raises(KerasmeshError) as e:
        cr.restore(half, path)
    assert e.value.kind == "checkpoint_dtype"
    assert '"trainable_variables/sequential/dense/kernel"' in e.value.message
    assert "Saved as float32; the model's is float16." in str(e.value)
    after = values(half)
    assert all(np.array_equal(before[k], after[k]) for k in before)


def test_restore_without_step_says_which_newer_steps_it_passed_over(
        trained, distribution):
    _, path = trained
    with open(os.path.join(path, "8", "_CHECKPOINT_METADATA"), "r+b") as f:
        f.write(b"[")  # same size, one byte changed
    distribution((8, 1))
    with pytest.warns(UserWarning) as caught:
        assert cr.restore(build(seed=99), path)["step"] == 4
    [w] = [w.message for w in caught if hasattr(w.message, "kind")]
    assert w.kind == "checkpoint_fallback"
    assert "Step 8 is not usable: file _CHECKPOINT_METADATA is damaged" in \
        w.bullets[0][1]


# Keras's own Orbax checkpoints ---------------------------------------------

def test_a_directory_keras_orbax_checkpoint_wrote_restores(tmp_path):
    x, y = data()
    model = build()
    cb = keras.callbacks.OrbaxCheckpoint(str(tmp_path), save_freq="epoch",
                                         save_on_background=False)
    model.fit(x, y, epochs=2, batch_size=16, shuffle=False, verbose=0,
              callbacks=[cb])
    info = cr.info(str(tmp_path))
    assert info["steps"]["step"] == [1]  # Keras counts epochs from 0
    assert info["steps"]["writer"] == ["orbax"]
    assert info["steps"]["complete"] == [True]
    v = info["variables"]
    assert "metrics_variables/loss/total" in v["key"]
    fresh = build(seed=5)
    assert cr.restore(fresh, str(tmp_path))["step"] == 1
    before, after = values(model), values(fresh)
    assert all(np.array_equal(before[k], after[k]) for k in before)


def test_keras_load_weights_reads_a_kerasmesh_checkpoint(trained):
    model, path = trained
    fresh = build(seed=5)
    fresh.optimizer.build(fresh.trainable_variables)
    fresh.load_weights(path)
    before, after = values(model), values(fresh)
    assert all(np.array_equal(before[k], after[k]) for k in before)
    # A model, though, needs its configuration, which kerasmesh does not
    # save: Keras says so.
    with pytest.raises(ValueError, match="model configuration"):
        keras.saving.load_model(path)


def test_arrays_are_written_uncompressed_and_read_back(tmp_path):
    # 256 x 256 zeros: zstd (Orbax's default) would store a few hundred
    # bytes; kerasmesh stores them as they are.
    model = keras.Sequential([keras.Input((256,)), keras.layers.Dense(
        256, kernel_initializer="zeros", use_bias=False, name="d")],
        name="m")
    model.compile(optimizer="adam", loss="mse")
    ck.save(model, str(tmp_path), step=1)
    step = os.path.join(str(tmp_path), "1")
    stored = sum(os.path.getsize(os.path.join(root, name))
                 for root, _, names in os.walk(step) for name in names)
    assert stored >= 3 * 256 * 256 * 4  # kernel and two Adam slots
    fresh = keras.Sequential([keras.Input((256,)), keras.layers.Dense(
        256, kernel_initializer="ones", use_bias=False, name="d")],
        name="m")
    fresh.compile(optimizer="adam", loss="mse")
    cr.restore(fresh, str(tmp_path))
    assert not np.any(fresh.trainable_variables[0].numpy())


# A run resumed from an earlier step -----------------------------------------

def test_a_save_below_newer_steps_is_refused_naming_them(tmp_path):
    d = str(tmp_path)
    model = build()
    for step in (8, 10):
        ck.save(model, d, step=step)
    with pytest.raises(KerasmeshError) as info:
        ck.save(model, d, step=5, keep=1)
    assert info.value.kind == "checkpoint_stale"
    text = str(info.value)
    assert "steps 8 and 10, newer than 5" in text
    assert "`overwrite = TRUE`" in text
    assert cr.info(d)["steps"]["step"] == [8, 10]  # nothing written


def test_overwrite_keeps_the_resumed_runs_steps_and_drops_the_stale(
        tmp_path):
    d = str(tmp_path)
    old, new = build(seed=1), build(seed=2)
    for step in (2, 3, 8, 10):
        ck.save(old, d, step=step)
    # Resumed from step 3: its step 4 replaces the abandoned 8 and 10, and
    # `keep` counts this run's steps, not the stale ones.
    ck.save(new, d, step=4, keep=2, overwrite=True)
    assert cr.info(d)["steps"]["step"] == [3, 4]
    restored = build(seed=3)
    assert cr.restore(restored, d)["step"] == 4
    assert all(np.array_equal(a, b) for a, b in
               zip(values(new), values(restored)))


def test_only_complete_steps_kerasmesh_saved_count_as_newer(tmp_path):
    d = str(tmp_path)
    model = build()
    ck.save(model, d, step=9)
    os.remove(os.path.join(d, "9", "_CHECKPOINT_METADATA"))  # damaged
    orbax_step(d, 12)  # another tool's
    assert ck.save(model, d, step=5)["step"] == 5
    assert cr.info(d)["steps"]["step"] == [5, 9, 12]
