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


def save_killed_at(directory, step, seed, point):
    """Save `step` over the existing one; SIGKILL at `point` of the save."""
    from kerasmesh.checkpoint import store as ck

    os.environ["KERASMESH_CHECKPOINT_TEST_KILL_AT"] = point
    ck.save(_model(seed), directory, step=step, overwrite=True, keep=1)


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
