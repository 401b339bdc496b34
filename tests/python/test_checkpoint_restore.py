"""Restoring: the weights alone, and what a mismatch of the optimizer's
state says."""

import os
import resource
import signal

import keras
import numpy as np
import pytest

import checkpoint_workers as workers
from checkpoint_models import build, data
from kerasmesh.checkpoint import restore as cr
from kerasmesh.checkpoint import store as ck
from kerasmesh.checkpoint import seal
from kerasmesh.core.errors import KerasmeshError
from test_checkpoint_files import orbax_step


def weights(model):
    return {v.path: np.asarray(v.value) for v in model.weights}


def quantized(seed, trained=False):
    """A model compiled, then quantized to int8 (its optimizer built for
    the float kernels when `trained`)."""
    model = build(seed=seed)
    if trained:
        model.optimizer.build(model.trainable_variables)
    model.quantize("int8")
    return model


def test_a_quantized_models_checkpoint_restores_its_weights_alone(tmp_path):
    d = str(tmp_path)
    saved = quantized(1)
    x, y = data()
    saved.fit(x, y, epochs=1, batch_size=16, verbose=0)
    ck.save(saved, d)
    target = quantized(2, trained=True)
    with pytest.raises(KerasmeshError) as info:
        cr.restore(target, d)
    assert info.value.kind in ("checkpoint_variables", "checkpoint_shape")
    text = str(info.value)
    assert "Only the optimizer's state differs" in text
    assert "`weights_only = TRUE`" in text
    iterations = int(target.optimizer.iterations.numpy())
    out = cr.restore(target, d, weights_only=True)
    assert out["step"] == 4
    before, after = weights(saved), weights(target)
    assert before.keys() == after.keys()
    assert all(np.array_equal(before[k], after[k]) for k in before)
    assert int(target.optimizer.iterations.numpy()) == iterations


def test_a_model_that_differs_in_its_weights_gets_no_optimizer_hint(
        tmp_path):
    ck.save(build(), str(tmp_path))
    with pytest.raises(KerasmeshError) as info:
        cr.restore(build(units=48), str(tmp_path), weights_only=True)
    assert info.value.kind == "checkpoint_shape"
    assert "weights_only" not in str(info.value)


def save_file_size_limited(directory):
    """Save with a file-size limit (RLIMIT_FSIZE) below the step's size:
    the write fails with EFBIG. Returns the error's kind."""
    from kerasmesh.core.errors import KerasmeshError

    model = workers._model(1)
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    resource.setrlimit(resource.RLIMIT_FSIZE, (4096, 4096))
    try:
        ck.save(model, directory, step=1)
    except KerasmeshError as e:
        return e.kind, str(e)
    return None, ""


def test_a_file_size_limit_is_a_write_error(tmp_path):
    import multiprocessing

    ctx = multiprocessing.get_context("spawn")
    with ctx.Pool(1) as pool:
        kind, text = pool.apply_async(save_file_size_limited,
                                      (str(tmp_path),)).get(timeout=180)
    assert kind == "checkpoint_write", text
    assert "File too large" in text
    assert not any(n.startswith(".kerasmesh-staging")
                   for n in os.listdir(tmp_path))


def test_keras_still_saves_after_a_restore_of_weights_alone(tmp_path):
    ck.save(build(), str(tmp_path))
    model = build(seed=3)
    cr.restore(model, str(tmp_path), weights_only=True)
    x, y = data()
    model.fit(x, y, epochs=1, batch_size=16, verbose=0)
    assert keras.ops.all(keras.ops.isfinite(model.weights[0].value))


def largest_file(path):
    found = [os.path.join(r, n) for r, _, names in os.walk(path)
             for n in names]
    return max(found, key=os.path.getsize)


@pytest.mark.parametrize("damage", ["missing", "truncated", "flipped"])
def test_a_restore_checks_each_file_it_reads(tmp_path, distribution,
                                             damage):
    from checkpoint_models import values
    from kerasmesh.core.errors import KerasmeshWarning

    distribution((2, 4))
    d = str(tmp_path)
    old = build(seed=1)
    ck.save(old, d, step=1)
    ck.save(build(seed=2), d, step=2)
    shard = largest_file(os.path.join(d, "2", "pytree"))
    name = os.path.relpath(shard, os.path.join(d, "2"))
    if damage == "missing":
        os.remove(shard)
    elif damage == "truncated":
        os.truncate(shard, os.path.getsize(shard) // 2)
    else:  # one byte in the middle, the size kept
        with open(shard, "r+b") as f:
            f.seek(os.path.getsize(shard) // 2)
            byte = f.read(1)
            f.seek(-1, os.SEEK_CUR)
            f.write(bytes([byte[0] ^ 0x01]))
    fresh = build(seed=3)
    with pytest.warns(KerasmeshWarning) as caught:
        assert cr.restore(fresh, d)["step"] == 1
    [w] = [w.message for w in caught if hasattr(w.message, "kind")]
    assert w.kind == "checkpoint_fallback"
    assert f"Step 2 is not usable: file {name}" in w.bullets[0][1]
    before, after = values(old), values(fresh)
    assert all(np.array_equal(before[k], after[k]) for k in before)
    with pytest.raises(KerasmeshError) as info:
        cr.restore(build(seed=3), d, step=2)
    assert info.value.kind == "checkpoint_incomplete"
    assert name in str(info.value)


# Steps Orbax can't read -----------------------------------------------------

def forged_step(directory, step):
    """A folder with a marker of kerasmesh's format and nothing else."""
    path = os.path.join(directory, str(step))
    os.makedirs(path)
    seal.write_marker(path, step, {})
    return path


def test_a_forged_marker_seals_no_step(tmp_path):
    d = str(tmp_path)
    forged_step(d, 7)
    steps = cr.info(d)["steps"]
    assert steps["complete"] == [False]
    assert "names no _CHECKPOINT_METADATA" in steps["problem"][0]
    for step in (None, 7):
        with pytest.raises(KerasmeshError) as info:
            cr.restore(build(), d, step=step)
        assert info.value.kind == "checkpoint_incomplete"
    ck.save(build(seed=1), d, step=3)
    with pytest.warns(Warning, match="Restoring step 3"):
        assert cr.restore(build(), d)["step"] == 3


def test_an_intact_step_orbax_cant_read_is_passed_over_classed(
        tmp_path, capfd):
    d = str(tmp_path)
    ck.save(build(seed=1), d, step=3)
    ck.save(build(seed=2), d, step=5)
    # Step 5's array metadata removed, and the step sealed again: its
    # files are what its marker says, and Orbax can't read them.
    path = os.path.join(d, "5")
    os.remove(os.path.join(path, "pytree", "_METADATA"))
    seal.write_marker(path, 5, seal.hash_files(path))
    capfd.readouterr()
    with pytest.warns(Warning, match="Restoring step 3") as caught:
        assert cr.restore(build(), d)["step"] == 3
    assert "Step 5 is not usable: Orbax can't read it" in \
        caught[0].message.bullets[0][1]
    with pytest.raises(KerasmeshError) as info:
        cr.restore(build(), d, step=5)
    assert info.value.kind == "checkpoint_incomplete"
    assert "Orbax can't read it" in str(info.value)
    err = capfd.readouterr().err
    assert "Traceback" not in err and "never retrieved" not in err


def test_info_passes_over_a_step_whose_variables_cant_be_read(tmp_path):
    d = str(tmp_path)
    ck.save(build(seed=1), d, step=3)
    orbax_step(d, 6)  # another tool's commit record, and no arrays
    listed = cr.info(d)
    assert listed["step"] == 3
    assert listed["steps"]["complete"] == [True, False]
    assert "Orbax can't read it" in listed["steps"]["problem"][1]
    with pytest.raises(KerasmeshError) as info:
        cr.info(d, step=6)
    assert info.value.kind == "checkpoint_incomplete"


def test_a_model_without_an_optimizer_is_refused_not_half_restored(
        tmp_path):
    d = str(tmp_path)
    ck.save(build(seed=1), d, step=3)
    bare = build(seed=2, compiled=False)
    before = [np.asarray(v) for v in bare.weights]
    with pytest.raises(KerasmeshError) as info:
        cr.restore(bare, d)
    assert info.value.kind == "checkpoint_variables"
    assert "the model has no optimizer" in str(info.value)
    assert "weights_only = TRUE" in str(info.value)
    assert all(np.array_equal(a, np.asarray(v))
               for a, v in zip(before, bare.weights))
    assert cr.restore(bare, d, weights_only=True)["step"] == 3


def test_a_mismatch_names_keys_as_the_checkpoint_lists_them(tmp_path):
    d = str(tmp_path)
    ck.save(build(seed=1), d, step=3)
    other = build(seed=2, optimizer="sgd")
    with pytest.raises(KerasmeshError) as info:
        cr.restore(other, d)
    listed = cr.info(d)["variables"]["key"]
    named = str(info.value)
    assert any(f'"{k}"' in named for k in listed if "optimizer" in k)
