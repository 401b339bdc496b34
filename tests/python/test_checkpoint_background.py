"""Background saves: the call returns once the arrays are copied, training
goes on, and an error is raised where the save is next waited for."""

import errno
import os

import pytest

import checkpoint_workers as workers
from checkpoint_models import build, data, values
from kerasmesh.checkpoint import background as cb
from kerasmesh.checkpoint import lock as cl
from kerasmesh.checkpoint import restore as cr
from kerasmesh.checkpoint import store as ck
from kerasmesh.checkpoint.callback import callback
from kerasmesh.core.errors import KerasmeshError
from test_checkpoint_commit import same, saved_values


def test_a_background_save_keeps_the_values_of_its_moment(
        tmp_path, distribution):
    distribution((2, 4))
    model = build()
    x, y = data()
    model.fit(x, y, epochs=1, batch_size=16, verbose=0)
    at_save = values(model)
    out = ck.save(model, str(tmp_path), step=4, background=True)
    assert out["pending"] is True and out["step"] == 4
    assert cb.pending() == [{"directory": str(tmp_path), "step": 4}]
    model.fit(x, y, epochs=2, batch_size=16, verbose=0)  # trains on
    done = ck.wait()
    assert done["pending"] is False and cb.pending() == []
    assert ck.wait() is None  # nothing pending: returns at once
    assert same(at_save, saved_values(str(tmp_path)))
    assert not same(at_save, values(model))


def failing_write(monkeypatch, error):
    def fail(response):
        response.result()
        raise error

    monkeypatch.setattr(ck, "finish_write", fail)


@pytest.mark.parametrize("error,why", [
    (OSError(errno.ENOSPC, "No space left on device"),
     "No space left on device"),
    (ValueError("RESOURCE_EXHAUSTED: [os_error_code='27']"),
     "File too large"),
    (FileNotFoundError(errno.ENOENT, "No such file or directory"),
     "FileNotFoundError")])
def test_a_failed_background_save_is_raised_by_wait_and_keeps_the_old(
        tmp_path, distribution, monkeypatch, error, why):
    distribution((2, 4))
    d = str(tmp_path)
    model = build(seed=1)
    ck.save(model, d, step=3)
    failing_write(monkeypatch, error)
    ck.save(build(seed=2), d, step=3, overwrite=True, background=True)
    with pytest.raises(KerasmeshError) as info:
        ck.wait()
    assert info.value.kind == "checkpoint_write"
    assert why in str(info.value)
    assert ck.wait() is None  # raised once, then no longer pending
    assert sorted(os.listdir(d)) == [".kerasmesh.lock", "3"]
    assert same(values(model), saved_values(d))


def test_a_failed_background_save_is_raised_by_the_next_save(
        tmp_path, distribution, monkeypatch):
    distribution((2, 4))
    d = str(tmp_path)
    model = build()
    failing_write(monkeypatch, OSError(errno.EIO, "Input/output error"))
    ck.save(model, d, step=1, background=True)
    monkeypatch.undo()
    with pytest.raises(KerasmeshError) as info:
        ck.save(model, d, step=2, background=True)
    assert info.value.kind == "checkpoint_write"
    assert "Step 1" in str(info.value)
    ck.save(model, d, step=2, background=True)  # goes on once raised
    ck.wait()
    assert cr.info(d)["steps"]["step"] == [2]


def test_a_callbacks_failed_save_stops_fit_at_its_end(
        tmp_path, distribution, monkeypatch):
    distribution((2, 4))
    failing_write(monkeypatch, OSError(errno.ENOSPC, "No space left"))
    cb_ = callback(str(tmp_path), every=1, unit="epoch")
    x, y = data()
    with pytest.raises(KerasmeshError) as info:
        build().fit(x, y, epochs=1, batch_size=16, verbose=0,
                    callbacks=[cb_])
    assert info.value.kind == "checkpoint_write"
    assert cb.pending() == []


def test_a_pending_save_is_waited_for_by_a_restore(tmp_path, distribution):
    distribution((2, 4))
    model = build()
    ck.save(model, str(tmp_path), step=5, background=True)
    fresh = build(seed=9)
    assert cr.restore(fresh, str(tmp_path))["step"] == 5
    assert cb.pending() == []
    assert same(values(model), values(fresh))


def test_waiting_past_the_timeout_is_a_timeout_and_the_save_goes_on(
        tmp_path, distribution, monkeypatch):
    import threading

    distribution((2, 4))
    gate = threading.Event()
    real = ck.finish_write

    def slow(response):
        gate.wait(30)
        real(response)

    monkeypatch.setattr(ck, "finish_write", slow)
    ck.save(build(), str(tmp_path), step=1, background=True)
    with pytest.raises(KerasmeshError) as info:
        ck.wait(timeout=0.2)
    assert info.value.kind == "timeout"
    assert cb.pending()[0]["step"] == 1
    gate.set()
    assert ck.wait()["step"] == 1


def test_a_process_exiting_with_a_pending_save_finishes_it(tmp_path):
    code = workers.run(workers.save_and_exit, str(tmp_path), 7)
    assert code == 0
    [step] = cr.info(str(tmp_path))["steps"]["step"]
    assert step == 7


def gated_write(monkeypatch, after):
    """Hold the background part of the next save until the returned event
    is set: before Orbax's write is waited for, or `after` it."""
    import threading

    gate, real = threading.Event(), ck.finish_write

    def held(response):
        if after:
            real(response)
        assert gate.wait(60)
        if not after:
            real(response)

    monkeypatch.setattr(ck, "finish_write", held)
    return gate


def remove_tree(path):
    """Delete `path` while Orbax may still write into it."""
    import shutil
    import time

    for _ in range(100):
        shutil.rmtree(path, ignore_errors=True)
        if not os.path.exists(path):
            return
        time.sleep(0.05)
    raise AssertionError(f"{path} could not be removed")


@pytest.mark.parametrize("after", [False, True])
@pytest.mark.parametrize("how", ["removed", "moved"])
def test_a_directory_gone_during_a_background_save_is_a_classed_error(
        tmp_path, distribution, monkeypatch, how, after):
    distribution((2, 4))
    d, moved = str(tmp_path / "ckpt"), str(tmp_path / "elsewhere")
    model = build(seed=1)
    ck.save(model, d, step=1)
    gate = gated_write(monkeypatch, after)
    ck.save(build(seed=2), d, step=2, background=True)
    if how == "moved":
        os.rename(d, moved)
    else:
        remove_tree(d)
    gate.set()
    with pytest.raises(KerasmeshError) as info:
        ck.wait()
    assert info.value.kind == "checkpoint_directory"
    assert f"{d} was removed, moved or replaced while step 2" in \
        str(info.value)
    assert cb.pending() == []
    # Nothing of step 2 is sealed where the directory was (Orbax may
    # have made it again), and the steps saved before went with it.
    assert not os.path.exists(os.path.join(d, "2"))
    if how == "moved":
        assert cr.info(moved)["steps"]["step"] == [1]
        assert same(values(model), saved_values(moved))


def test_a_second_save_waits_for_the_pending_one(tmp_path, distribution,
                                                 monkeypatch):
    distribution((2, 4))
    first, second = str(tmp_path / "a"), str(tmp_path / "b")
    model = build()
    gate = gated_write(monkeypatch, after=False)
    ck.save(model, first, step=1, background=True)
    # Another directory's save, too: one save at a time, not one a lock.
    with pytest.raises(KerasmeshError) as info:
        ck.save(model, second, step=2, background=True, timeout=0.5)
    assert info.value.kind == "timeout"
    assert "the background save of step 1" in str(info.value)
    assert cb.pending() == [{"directory": first, "step": 1}]
    assert not os.path.exists(second)
    gate.set()
    ck.save(model, second, step=2, background=True)
    assert cb.pending() == [{"directory": second, "step": 2}]
    ck.wait()
    assert cr.info(first)["steps"]["step"] == [1]
    assert cr.info(second)["steps"]["step"] == [2]


def test_a_callbacks_failed_save_stops_fit_at_the_next_save(
        tmp_path, distribution, monkeypatch):
    distribution((2, 4))
    failing_write(monkeypatch, OSError(errno.ENOSPC, "No space left"))
    model = build()
    x, y = data()  # 4 steps of 16
    with pytest.raises(KerasmeshError) as info:
        model.fit(x, y, epochs=1, batch_size=16, verbose=0,
                  callbacks=[callback(str(tmp_path), every=1, unit="step")])
    assert info.value.kind == "checkpoint_write"
    assert "Step 1 must be written" in str(info.value)
    assert int(model.optimizer.iterations.numpy()) == 2  # not 4
    assert cb.pending() == []


def test_a_directory_removed_while_orbax_writes_fails_quietly(
        tmp_path, distribution, monkeypatch, capfd, caplog):
    distribution((2, 4))
    d = str(tmp_path / "ckpt")
    ck.save(build(seed=1, units=4096), d, step=1)
    real = ck.begin_write

    def begin_then_remove(staging, tree, meta):
        response = real(staging, tree, meta)
        remove_tree(d)  # while Orbax's threads write
        return response

    monkeypatch.setattr(ck, "begin_write", begin_then_remove)
    capfd.readouterr()
    ck.save(build(seed=2, units=4096), d, step=2, background=True)
    with pytest.raises(KerasmeshError) as info:
        ck.wait()
    assert info.value.kind == "checkpoint_directory"
    assert cb.pending() == []
    assert not os.path.exists(d)  # not made anew by Orbax's writers
    # Orbax's threads failed and logged each error with its traceback:
    # none of it reaches the console (or a handler), only the classed
    # error.
    err = capfd.readouterr().err
    assert "Traceback" not in err and "ERROR:absl" not in err
    assert [r.getMessage() for r in caplog.records
            if "orbax" in r.pathname or r.name == "asyncio"] == []


def test_what_writers_recreate_of_a_removed_directory_goes_with_it(
        tmp_path, monkeypatch):
    monkeypatch.setattr(ck, "SETTLE_S", 0.01)
    d = str(tmp_path / "ckpt")
    os.makedirs(os.path.join(d, ".kerasmesh-staging-4.orbax-checkpoint-tmp",
                             "pytree"))
    with open(os.path.join(d, ".kerasmesh-staging-4.orbax-checkpoint-tmp",
                           "pytree", "_sharding"), "w") as f:
        f.write("{}")
    ck.unmake_recreated(d, 4)
    assert not os.path.exists(d)
    # A directory holding anything else stays, with it.
    os.makedirs(d)
    with open(os.path.join(d, "mine.txt"), "w") as f:
        f.write("mine")
    ck.unmake_recreated(d, 4)
    assert os.listdir(d) == ["mine.txt"]


def test_a_file_of_the_step_that_vanished_means_the_directory_moved(
        tmp_path):
    d = str(tmp_path)
    gone = FileNotFoundError(errno.ENOENT, "No such file or directory",
                             os.path.join(d, ".kerasmesh-staging-2", "x"))
    os.makedirs(os.path.join(d, ".kerasmesh-staging-2"))
    lost = ck.displaced(cl.HeldLock(), d, 2, gone)
    assert lost.kind == "checkpoint_directory"
    assert "vanished" in str(lost)
    # A file not found that names no file of the step says nothing of it.
    unnamed = FileNotFoundError(errno.ENOENT, "No such file or directory")
    assert ck.displaced(cl.HeldLock(), d, 2, unnamed) is None
    assert ck.displaced(cl.HeldLock(), d, 2) is None
