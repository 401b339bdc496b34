"""The Keras callback that saves sharded checkpoints while a model trains."""

import os

import numpy as np
import pytest

from checkpoint_models import build, data, values
from kerasmesh.checkpoint import restore as cr
from kerasmesh.checkpoint.callback import callback
from kerasmesh.core.errors import KerasmeshError


@pytest.mark.parametrize("unit", ["batch", "", None, 1])
def test_a_unit_other_than_epoch_or_step_is_an_argument_error(tmp_path, unit):
    with pytest.raises(KerasmeshError) as info:
        callback(str(tmp_path), every=1, unit=unit)
    assert info.value.kind == "argument"
    assert info.value.bullets[0][1] == "Received {value}."


def test_callback_saves_every_n_steps_and_keeps_the_last(
        tmp_path, distribution):
    distribution((2, 4))
    model = build()
    x, y = data()
    cb = callback(str(tmp_path), every=2, unit="step", keep=2)
    model.fit(x, y, epochs=2, batch_size=16, shuffle=False, verbose=0,
              callbacks=[cb])
    assert cb.saved == [2, 4, 6, 8]
    info = cr.info(str(tmp_path))
    assert info["steps"]["step"] == [6, 8]
    assert info["epoch"] == 1
    # The saved step 8 is the model after training.
    fresh = build(seed=5)
    cr.restore(fresh, str(tmp_path))
    before, after = values(model), values(fresh)
    assert all(np.array_equal(before[k], after[k]) for k in before)


def test_callback_saves_every_epoch(tmp_path, distribution):
    distribution((2, 4))
    model = build()
    x, y = data()
    cb = callback(str(tmp_path), every=1, unit="epoch")
    model.fit(x, y, epochs=2, batch_size=16, shuffle=False, verbose=0,
              callbacks=[cb])
    info = cr.info(str(tmp_path))
    assert info["steps"]["step"] == [4, 8]
    assert info["epoch"] == 2


def fit(model, cb, rows=64, epochs=1, **kwargs):
    x, y = data()
    model.fit(x[:rows], y[:rows], epochs=epochs, batch_size=16,
              shuffle=False, verbose=0, callbacks=[cb], **kwargs)


def test_every_not_a_multiple_of_steps_per_execution_stops_fit_at_start(
        tmp_path, distribution):
    distribution((2, 4))
    model = build()
    model.compile(optimizer="adam", loss="mse", steps_per_execution=4)
    cb = callback(str(tmp_path), every=3, unit="step")
    with pytest.raises(KerasmeshError) as info:
        fit(model, cb)
    assert info.value.kind == "argument"
    assert "`every`" in info.value.message
    assert "`every` is 3; `steps_per_execution` is 4" in str(info.value)
    assert int(model.optimizer.iterations.numpy()) == 0


def test_callback_saves_the_steps_it_promises_under_steps_per_execution(
        tmp_path, distribution):
    distribution((2, 4))
    model = build()
    model.compile(optimizer="adam", loss="mse", steps_per_execution=2)
    cb = callback(str(tmp_path), every=4, unit="step")
    fit(model, cb, epochs=2)
    assert cb.saved == [4, 8]
    # An execution cut short by the end of an epoch (4 steps in 3 + 1)
    # that passes a multiple of `every` saves where it ends.
    model.compile(optimizer="adam", loss="mse", steps_per_execution=3)
    other = callback(str(tmp_path / "other"), every=3, unit="step")
    fit(model, other, epochs=2)
    assert other.saved == [3, 7]


def test_a_reused_callback_after_a_restore_replaces_the_steps_beyond(
        tmp_path, distribution):
    d = str(tmp_path)
    distribution((2, 4))
    model = build()
    cb = callback(d, every=2, unit="step", keep=10)
    fit(model, cb, epochs=2)
    assert cr.info(d)["steps"]["step"] == [2, 4, 6, 8]
    os.makedirs(tmp_path / "7")  # a folder of the user's
    cr.restore(model, d, step=4)
    fit(model, cb, rows=32)  # steps 5 and 6 only
    steps = cr.info(d)["steps"]
    assert steps["step"] == [2, 4, 6, 7]
    assert steps["writer"] == ["kerasmesh"] * 3 + ["unknown"]
    assert cb.saved[-1] == 6
    fresh = build(seed=5)
    assert cr.restore(fresh, d)["step"] == 6
    before, after = values(model), values(fresh)
    assert all(np.array_equal(before[k], after[k]) for k in before)


def test_a_run_that_resumed_from_no_step_of_dir_never_deletes_its_steps(
        tmp_path, distribution):
    d = str(tmp_path)
    distribution((2, 4))
    fit(build(), callback(d, every=2, unit="step", keep=10), epochs=2)
    assert cr.info(d)["steps"]["step"] == [2, 4, 6, 8]
    for restored in (False, True):
        fresh = build(seed=3)
        if restored:
            cr.restore(fresh, d, step=6, weights_only=True)  # step count 0
        with pytest.raises(KerasmeshError) as info:
            fit(fresh, callback(d, every=2, unit="step"), rows=32)
        assert info.value.kind == "checkpoint_stale"
        assert "holds steps 2, 4, 6 and 1 more; this run starts at step 0" in \
            str(info.value)
        assert int(fresh.optimizer.iterations.numpy()) == 0  # no training
    assert cr.info(d)["steps"]["step"] == [2, 4, 6, 8]


def test_keep_never_deletes_a_users_numbered_folder(tmp_path, distribution):
    d = str(tmp_path)
    for name in ("5", "123"):
        os.makedirs(tmp_path / name)
        (tmp_path / name / "data.csv").write_text("mine")
    distribution((2, 4))
    cb = callback(d, every=2, unit="step", keep=1)
    fit(build(), cb, epochs=2)
    assert sorted(os.listdir(d)) == [".kerasmesh.lock", "123", "5", "8"]
    assert (tmp_path / "5" / "data.csv").read_text() == "mine"


@pytest.mark.parametrize("every,keep", [(0, None), (1, 0), (2.5, None)])
def test_every_and_keep_are_checked_before_anything_runs(tmp_path, every,
                                                         keep):
    with pytest.raises(KerasmeshError) as info:
        callback(str(tmp_path), every=every, unit="step", keep=keep)
    assert info.value.kind == "argument"
