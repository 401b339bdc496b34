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


def kill_at(point):
    """Make this process's next save SIGKILL itself at `point` (the kill
    points are shared with the R tests)."""
    import sys

    sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..",
                                    "testthat", "fixtures"))
    import checkpoint_kill

    checkpoint_kill.kill_at(point)


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
