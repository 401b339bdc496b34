"""Checkpoint benchmarks: kerasmesh beside Keras's and Orbax's own, on the
same model in the same run (bench/run.R runs each in fresh processes).

    python checkpoint.py stall kerasmesh|keras   stall per save in fit()
                                                 (30 steps of batch 16)
    python checkpoint.py saveload                save and restore times
    python checkpoint.py multi                   2 processes x 4 devices

Orbax's baselines are timed twice: with its default write (zstd) and with
kerasmesh's (uncompressed), so that the rows say what the format choice
gives and what the rest of kerasmesh's save costs.

The model: an MLP 4096 -> 10240 -> 4096 (83.9 million parameters) with
Adam, model parallel on a 2 x 4 mesh of simulated CPU devices: 1.0 GB of
state (weights and Adam's two slots). Prints "name value" lines.
"""

import functools
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time

os.environ.setdefault("KERAS_BACKEND", "jax")
os.environ.setdefault("JAX_PLATFORMS", "cpu")
HERE = os.path.dirname(os.path.abspath(__file__))
# Orbax's loads run an event loop inside its own (asyncio_utils.run_sync):
# that needs uvloop (or nest_asyncio). When Orbax's `import uvloop` fails,
# every load fails with a misleading "incompatible handler" error; import
# it here first, so that its own error is what is seen.
import uvloop  # noqa: E402,F401
sys.path.insert(0, os.path.join(HERE, "..", "inst", "python"))

STEPS, EVERY, BATCH = 30, 5, 16
WIDTH, HIDDEN = 4096, 10240


def devices(n):
    os.environ["XLA_FLAGS"] = \
        f"--xla_force_host_platform_device_count={n}"


def model_and_data():
    import keras
    import numpy as np

    mesh = keras.distribution.DeviceMesh((2, 4), ["data", "model"])
    lm = keras.distribution.LayoutMap(mesh)
    lm[".*dense.*kernel"] = (None, "model")
    lm[".*dense.*bias"] = ("model",)
    keras.distribution.set_distribution(keras.distribution.ModelParallel(
        layout_map=lm, batch_dim_name="data", auto_shard_dataset=False))
    keras.utils.set_random_seed(1)
    model = keras.Sequential([
        keras.Input((WIDTH,)),
        keras.layers.Dense(HIDDEN, activation="relu", name="dense"),
        keras.layers.Dense(WIDTH, name="dense_1")], name="mlp")
    model.compile(optimizer="adam", loss="mse")
    rng = np.random.default_rng(0)
    x = rng.normal(size=(STEPS * BATCH, WIDTH)).astype("float32")
    return model, x, x


def fit(model, x, y, callbacks):
    start = time.perf_counter()
    model.fit(x, y, batch_size=BATCH, epochs=1, shuffle=False, verbose=0,
              callbacks=callbacks)
    return time.perf_counter() - start


def blocked(cb):
    """Time the training loop spends inside the checkpoint callback: its
    `on_train_batch_end` (where both callbacks start a save, waiting for
    the previous one first) and its `on_train_end` (where both wait for
    the last), wrapped on the instance, the same way for both."""
    spent = {"batch_end": 0.0, "saves": 0, "train_end": 0.0}

    def timed(fn, key):
        def wrapper(*args, **kwargs):
            start = time.perf_counter()
            try:
                return fn(*args, **kwargs)
            finally:
                spent[key] += time.perf_counter() - start
        return wrapper

    cb.on_train_batch_end = timed(cb.on_train_batch_end, "batch_end")
    cb.on_train_end = timed(cb.on_train_end, "train_end")
    name = "_save" if hasattr(cb, "saved") else "_save_checkpoint"
    save = getattr(cb, name)

    def counted(*args, **kwargs):
        spent["saves"] += 1
        return save(*args, **kwargs)

    setattr(cb, name, counted)
    return spent


def stall(who):
    """Seconds per save that training is blocked for, with a save every
    EVERY steps: the time `fit()` spends inside the checkpoint callback's
    `on_train_batch_end` over the timed run, divided by the saves it made
    (what each save costs the training thread: copying the arrays off the
    devices, and waiting for the previous save when it has not ended).
    Also: the whole `fit()` and its final wait for the last save."""
    devices(8)
    import keras

    model, x, y = model_and_data()
    fit(model, x[:2 * BATCH], y[:2 * BATCH], [])  # compile
    d = tempfile.mkdtemp()
    try:
        if who == "kerasmesh":
            from kerasmesh.checkpoint.callback import callback

            cb = callback(d, every=EVERY, unit="step", keep=1)
        else:
            cb = keras.callbacks.OrbaxCheckpoint(
                d, save_freq=EVERY, max_to_keep=1, save_on_background=True)
        fit(model, x[:EVERY * BATCH], y[:EVERY * BATCH], [cb])  # warm up
        spent = blocked(cb)
        took_fit = fit(model, x, y, [cb])
    finally:
        shutil.rmtree(d, ignore_errors=True)
    print(f"stall_seconds {spent['batch_end'] / max(spent['saves'], 1)}")
    print(f"saves {spent['saves']}")
    print(f"end_wait_seconds {spent['train_end']}")
    print(f"fit_seconds {took_fit}")


def state_tree(model):
    """The model's state as Keras's tree, its Adam slots filled with noise
    as training leaves them (zeros would compress to nothing)."""
    import jax
    from kerasmesh.checkpoint.variables import keyed_variables, nest

    model.optimizer.build(model.trainable_variables)
    key = jax.random.key(0)
    for v in model.optimizer.variables:
        if len(v.shape) and "float" in str(v.dtype):
            key, sub = jax.random.split(key)
            sharding = v.value.sharding
            noise = functools.partial(jax.random.normal, shape=v.shape,
                                      dtype=v.dtype)
            v.assign(1e-3 * jax.jit(noise, out_shardings=sharding)(sub))
    return nest({k: v.value for k, v in keyed_variables(model).items()})


def abstract_of(tree):
    """Orbax's restore target, as its documentation builds one: the shape,
    dtype and sharding of every array of the live state (no metadata read,
    no placeholder: the same tree that was saved)."""
    import jax

    return jax.tree.map(lambda a: jax.ShapeDtypeStruct(
        a.shape, a.dtype, sharding=a.sharding), tree)


def orbax_context(ocp, compress):
    """Orbax's default write (zstd, `compress`) or kerasmesh's
    (uncompressed, `store.write_options()`)."""
    saving = ocp.options.ArrayOptions.Saving(use_compression=compress)
    return ocp.Context(array_options=ocp.options.ArrayOptions(saving=saving))


def timed(fn, *args, **kwargs):
    """Seconds `fn(*args, **kwargs)` takes."""
    start = time.perf_counter()
    fn(*args, **kwargs)
    return time.perf_counter() - start


def orbax_read(ocp, path, abstract):
    import jax

    jax.block_until_ready(ocp.load_checkpointables(
        path, {"pytree": abstract}))


def kerasmesh_read(model, path):
    """restore_checkpoint(), until its arrays are in the model."""
    import jax
    from kerasmesh.checkpoint import restore as cr

    cr.restore(model, path)
    jax.block_until_ready([v.value for v in model.variables])


def saveload():
    """A foreground save and a restore of the same state: kerasmesh's
    save_checkpoint() and restore_checkpoint() beside Orbax's own
    save_checkpointables() and load_checkpointables(), with Orbax's
    default (compressed) write and with kerasmesh's (uncompressed)."""
    devices(8)
    from orbax.checkpoint import v1 as ocp
    from kerasmesh.checkpoint import store as ck

    model, _, _ = model_and_data()
    tree = state_tree(model)
    abstract = abstract_of(tree)
    root = tempfile.mkdtemp()
    t = {}
    try:
        for i in range(3):  # the first round warms all up
            for name, compress in (("orbax", True), ("orbax_raw", False)):
                path = os.path.join(root, f"{name}{i}")
                with orbax_context(ocp, compress):
                    t[f"{name}_save"] = timed(ocp.save_checkpointables,
                                              path, {"pytree": tree})
                t[f"{name}_restore"] = timed(orbax_read, ocp, path, abstract)
            path = os.path.join(root, f"k{i}")
            t["kerasmesh_save"] = timed(ck.save, model, path, step=1)
            t["kerasmesh_restore"] = timed(kerasmesh_read, model, path)
        for key, value in t.items():
            print(f"{key} {value}")
    finally:
        shutil.rmtree(root, ignore_errors=True)


def multi_worker(index, port, root):
    """One of 2 processes with 4 devices each: the 2 x 4 save, kerasmesh's
    and Orbax's own (default and uncompressed), timed in process 0."""
    devices(4)
    import jax

    jax.config.update("jax_cpu_collectives_implementation", "gloo")
    jax.distributed.initialize(f"127.0.0.1:{port}", num_processes=2,
                               process_id=index)
    from orbax.checkpoint import v1 as ocp
    from kerasmesh.checkpoint import store as ck

    model, _, _ = model_and_data()
    tree = state_tree(model)
    t = {}
    for i in range(2):
        for name, compress in (("orbax", True), ("orbax_raw", False)):
            path = os.path.join(root, f"{name}{i}")
            with orbax_context(ocp, compress):
                t[f"multi_{name}_save"] = timed(
                    ocp.save_checkpointables, path, {"pytree": tree})
        t["multi_kerasmesh_save"] = timed(
            ck.save, model, os.path.join(root, f"k{i}"), step=1)
    if index == 0:
        for key, value in t.items():
            print(f"{key} {value}")


def multi():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    root = tempfile.mkdtemp()
    try:
        procs = [subprocess.Popen([sys.executable, __file__, "worker",
                                   str(i), str(port), root])
                 for i in range(2)]
        codes = [p.wait(timeout=900) for p in procs]
        assert codes == [0, 0], codes
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    what = sys.argv[1]
    if what == "stall":
        stall(sys.argv[2])
    elif what == "saveload":
        saveload()
    elif what == "multi":
        multi()
    else:
        multi_worker(int(sys.argv[2]), int(sys.argv[3]), sys.argv[4])
