"""Processes that save checkpoints, for the tests of saves cut short and of
two writers at once (test_checkpoint_commit.py). Each runs in a process of
its own (multiprocessing's "spawn": a fresh Python with this module), with
8 simulated CPU devices as conftest.py sets for the tests."""

import multiprocessing
import os


def _model(seed):
    os.environ.setdefault("KERAS_BACKEND", "jax")
    from checkpoint_models import build

    return build(seed=seed)


# The named points of a save, each where a test kills it: (module, the
# function of it that the save calls, and whether the kill comes before
# the call or after it returns). See store.py for the order.
KILL_POINTS = {
    "copying": ("store", "begin_write", "before"),
    "copied": ("store", "begin_write", "after"),
    "written": ("store", "finish_write", "after"),
    "hashed": ("store", "hash_files", "after"),
    "sealed": ("store", "write_marker", "after"),
    "retired": ("commit", "retire", "after"),
    "swapped": ("commit", "put_in_place", "after"),
    "pruned": ("commit", "prune", "after"),
}


def kill_at(point):
    """Make this process's next save SIGKILL itself at `point`, by
    wrapping the function of the save named for it (no production code
    knows of this)."""
    import functools
    import importlib
    import signal

    module, name, when = KILL_POINTS[point]
    module = importlib.import_module(f"kerasmesh.checkpoint.{module}")
    original = getattr(module, name)

    @functools.wraps(original)
    def killing(*args, **kwargs):
        if when == "before":
            os.kill(os.getpid(), signal.SIGKILL)
        out = original(*args, **kwargs)
        os.kill(os.getpid(), signal.SIGKILL)
        return out

    setattr(module, name, killing)


def save_killed_at(directory, step, seed, point, background=False):
    """Save `step` over the existing one; SIGKILL at `point` of the save.
    In the background, the caller trains on (here: sleeps) meanwhile."""
    import time

    from kerasmesh.checkpoint import store as ck

    model = _model(seed)
    kill_at(point)
    ck.save(model, directory, step=step, overwrite=True, keep=1,
            background=background)
    time.sleep(60)  # killed before this ends


def save_racing(directory, steps, seed, overwrite, barrier, results):
    """Save each of `steps` once the other writer is ready too; put
    (seed, step, outcome) on `results`: "ok" or the error's kind."""
    from kerasmesh.checkpoint import store as ck
    from kerasmesh.core.errors import KerasmeshError

    model = _model(seed)
    for step in steps:
        barrier.wait(timeout=120)
        try:
            ck.save(model, directory, step=step, overwrite=overwrite)
            outcome = "ok"
        except KerasmeshError as e:
            outcome = e.kind
        except Exception as e:  # noqa: BLE001 - the test reports it
            outcome = f"{type(e).__name__}: {e}"
        results.put((seed, step, outcome))


def run(target, *args, timeout=180):
    """Run `target(*args)` in a fresh process; its exit code (-9 when
    SIGKILLed). Killed if it outlives `timeout` seconds."""
    ctx = multiprocessing.get_context("spawn")
    p = ctx.Process(target=target, args=args)
    p.start()
    p.join(timeout)
    if p.is_alive():
        p.kill()
        p.join()
        raise TimeoutError(f"{target.__name__} ran over {timeout} s")
    return p.exitcode


def save_and_exit(directory, step):
    """Start a background save and return at once: Python's exit must
    finish it."""
    from kerasmesh.checkpoint import store as ck

    ck.save(_model(1), directory, step=step, background=True)
