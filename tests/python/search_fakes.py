"""Synthetic search objects for the search's unit tests: settings, a space
of meshes and layouts, and figures, without compiling anything.

Each is the search's own type (`Settings`, `MeshLayouts`, `Figures`,
`Profile`) built from chosen numbers, so a test can state what the
prediction, the solve or the verification must make of them.
"""

import time
from types import SimpleNamespace

from kerasmesh.search.arguments import MeshLayouts, Settings, Space, Step
from kerasmesh.search.figures import Figures
from kerasmesh.search.levers import LeverSpace
from kerasmesh.search.meshes import MeshOption


def settings(blocks=None, budget=None, objective="traffic",
             remats=("none",), steps=None, batch_size=8, timing=None,
             left=60.0, profile_left=None, models=None, cache_dir=None):
    """A search's `Settings`: models by depth (1 and 2 blocks with
    `blocks`, else the model itself), `left` seconds to its end and
    `profile_left` (default `left`) to the profile's."""
    now = time.monotonic()
    if models is None:
        models = {None: None} if blocks is None else {1: None, 2: None}
    return Settings(
        model=None, models=models, blocks=blocks,
        step=Step(batch_size, "sgd", "mse", None, "data"), budget=budget,
        objective=objective, machine=None, timing=timing,
        levers=LeverSpace(tuple(remats), steps, batch_size, blocks),
        slot_ratio=0.0,
        profile_end=now + (left if profile_left is None else profile_left),
        end=now + left, timeout=60.0, cache_dir=cache_dir)


def mesh_layouts(n_layouts, shape=(2, 4), nodes=None, floor=None,
                 keras_mesh=None):
    """One mesh of the space: `n_layouts` layouts named "layout <i>" whose
    choice is `(i,)`, `floor(choice)` (default 0) and device orders
    `nodes` ({order: node of each position}; default: one node). On a
    Keras `keras_mesh`, each layout's layout map is one without rules."""
    mesh = keras_mesh if keras_mesh is not None else \
        SimpleNamespace(shape=shape)
    sizes = {"data": shape[0], "model": shape[1]}
    rules = SimpleNamespace(
        sizes=sizes, all_rules=lambda choice: [["layout", list(choice)]],
        rules=lambda choice: [],
        layout_map=lambda choice: _layout_map(keras_mesh))
    return MeshLayouts(
        option=MeshOption(tuple(shape), mesh, dict(nodes or {})),
        space=rules, floor=floor or (lambda choice: 0.0),
        layouts=[(f"layout {i}", (i,)) for i in range(n_layouts)])


def space(*meshes):
    """A `Space` of `mesh_layouts()`."""
    return Space(list(meshes))


def figures(static=0.0, temp=0.0, inputs=0.0, gradients=0.0, flops=0.0,
            weights=0.0, activations=0.0, micro_batch=8, **others):
    """One compile's `Figures`: collectives of `weights` and `activations`
    bytes over the "data" axis."""
    by_axes = {"data": {"weights": float(weights),
                        "activations": float(activations)}}
    return Figures(static=float(static), temp=float(temp),
                   inputs=float(inputs), gradients=float(gradients),
                   flops=float(flops), recompute_share=0.0,
                   by_axes=others.pop("by_axes", by_axes),
                   micro_batch=micro_batch, **others)


def cost_result(need=100.0, traffic=10.0, k=1, temp=10.0, inputs=5.0):
    """A `layout_cost(trace=True)` result, as far as `Figures.of()`
    reads it: `traffic` bytes of weights' all-reduce over "data"."""
    return {"need": need, "accumulation_steps": k,
            "xla": {"temp": temp}, "memory": {"inputs": inputs},
            "plan": {"device_gradients": 1.0},
            "ops": [{"axes": ["data"], "bytes": traffic, "weights": True}],
            "flops": 1.0, "recompute_flops": 0.0, "trace": [],
            "reshardings": {}, "micro_batch_size": 8 // k,
            "compiled_for": {"kind": "cpu"}}


def _layout_map(keras_mesh):
    import keras

    return keras.distribution.LayoutMap(keras_mesh)
