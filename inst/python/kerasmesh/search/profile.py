"""The profile: the compiles a search solves on (`pipeline.py`, step 3).

`Profiler.run()` compiles, in a fixed order, each (mesh, layout) whose
floor fits, at the first remat choice; then the other remat choices of
the (mesh, layout) whose least objective could still beat the best
configuration predicted to fit, least first, until none can. Each
compile's figures come from the cache when it has them (`cache.py`).
When the time for profiling runs out, what was not compiled is listed
(`unprofiled`) and the search goes on with what it has.
"""

from __future__ import annotations

import hashlib
import os
import time
from collections.abc import Callable
from typing import Any

from ..core.errors import KerasmeshError
from ..core import kinds
from ..core.placement import model_variables, variable_shape
from ..cost import layout_cost as cost
from ..cost.recompute import Levers
from ..cost.report import versions
from ..cost.target import choose
from ..mesh.device_mesh import describe_mesh
from ..topology.time import model_compute_dtype
from .arguments import Settings, Space
from .cache import Cache, key_of
from .figures import Figures
from .predict import Predictor, Profile
from .solve import candidates


def code_version() -> str:
    """A hash of the code that makes figures (`cost/`, `figures.py`): a
    change to it makes earlier cache entries unreachable."""
    here = os.path.dirname(os.path.abspath(__file__))
    digest = hashlib.sha256()
    files = [os.path.join(here, "figures.py")]
    cost_dir = os.path.join(os.path.dirname(here), "cost")
    files += sorted(os.path.join(cost_dir, f) for f in os.listdir(cost_dir)
                    if f.endswith(".py"))
    for path in files:
        with open(path, "rb") as f:
            digest.update(f.read())
    return digest.hexdigest()


def _described(value: Any) -> Any:
    """A plain description of an optimizer or loss (its name, or Keras's
    serialization without the names Keras numbers anew on each object,
    "adam_2"), or the value when it is plain."""
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    try:
        import keras

        return _unnamed(keras.saving.serialize_keras_object(value))
    except Exception:  # noqa: BLE001 - not describable: no cache key
        return object()


def _unnamed(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _unnamed(v) for k, v in value.items() if k != "name"}
    if isinstance(value, list):
        return [_unnamed(v) for v in value]
    return value


def model_signature(model: Any) -> dict:
    """What of a model decides its compiled step's figures (its compiled
    optimizer and loss too: `optimizer = None` costs those)."""
    inputs = getattr(model, "inputs", None) or []
    return {
        "class": type(model).__name__,
        "optimizer": _described(getattr(model, "optimizer", None)),
        "loss": _described(getattr(model, "loss", None)),
        "policy": str(getattr(getattr(model, "dtype_policy", None), "name",
                              "")),
        "variables": [[v.path, variable_shape(v), str(v.dtype)]
                      for v in model_variables(model)],
        "inputs": [[[None if d is None else int(d) for d in t.shape],
                    str(t.dtype)] for t in inputs],
    }


class Profiler:
    """The profile of one search.

    Attributes:
        profiles: by (mesh, layout): what was compiled.
        pruned: (mesh, layout) pairs whose floor breaks the budget.
        unprofiled: (mesh, layout, remat) left out when time ran out.
        log: one entry per compile or cache read (for the result).
        predictor: the predictions on this profile.
    """

    def __init__(self, settings: Settings, space: Space,
                 progress: Callable | None = None):
        self.settings, self.space, self.progress = settings, space, progress
        self.cache = Cache(settings.cache_dir)
        deepest = list(settings.models.values())[-1]
        self.predictor = Predictor(settings, model_compute_dtype(deepest))
        self.profiles: dict[tuple[int, int], Profile] = {}
        self.pruned: list[tuple[int, int]] = []
        self.unprofiled: list[tuple[int, int, str]] = []
        self.log: list[dict] = []
        self.stopped = False
        self._fixed_key = {
            "batch": settings.step.batch_size,
            "optimizer": _described(settings.step.optimizer),
            "loss": _described(settings.step.loss),
            "inputs": settings.step.input_shapes,
            "code": code_version(), "versions": versions()}
        self._signatures = {d: model_signature(m)
                            for d, m in settings.models.items()}

    def run(self) -> None:
        """Profile the space (see the module's docstring)."""
        first = self.settings.levers.remats[0]
        for m, mesh in enumerate(self.space.meshes):
            for layout, (_, choice) in enumerate(mesh.layouts):
                budget = self.settings.budget
                if budget is not None and mesh.floor(choice) > budget:
                    self.pruned.append((m, layout))
                    continue
                self.profiles[(m, layout)] = Profile(m, layout)
                self._profile(m, layout, first)
        self._other_remats()

    def _other_remats(self) -> None:
        """The other remat choices, by least objective (see the module's
        docstring)."""
        remats = self.settings.levers.remats[1:]
        least = {key: self._least(p) for key, p in self.profiles.items()}
        while not self.stopped:
            ranked = candidates(self.settings, self.space, self.predictor,
                                self.profiles)
            fit = [c for c in ranked if c.fits]
            best = fit[0].value if fit else None
            pending = [(least[key], key, r) for key, p in
                       sorted(self.profiles.items())
                       for r in remats if least[key] is not None and
                       not p.failed and not self.predictor.has(p, r) and
                       (best is None or least[key] < best)]
            if not pending:
                return
            _, (m, layout), remat = min(pending, key=lambda e: (
                e[0], e[1], remats.index(e[2])))
            self._profile(m, layout, remat)

    def _least(self, p: Profile) -> float | None:
        """The least objective of a profile at its first remat choice, any
        device order and micro-batches, memory aside (remat only adds)."""
        first = self.settings.levers.remats[0]
        if p.failed or not self.predictor.has(p, first):
            return None
        mesh = self.space.meshes[p.mesh]
        return min(self.predictor.value(p, nodes, Levers(first, k))
                   for nodes in mesh.orders().values()
                   for k in self.settings.levers.ks(mesh.option.shape[0]))

    def _profile(self, m: int, layout: int, remat: str) -> None:
        """Compile (or read) every depth `remat` is predicted from."""
        p = self.profiles[(m, layout)]
        for depth in self.predictor.depths(remat):
            if p.failed or (remat, depth) in p.figures:
                continue
            if self.stopped or \
                    self.settings.left(self.settings.profile_end) <= 0:
                self._stop(m, layout, remat)
                return
            figures = self._point(m, layout, remat, depth)
            if figures is not None:
                p.figures[(remat, depth)] = figures

    def _stop(self, m: int, layout: int, remat: str) -> None:
        """Stop profiling; `remat` of (m, layout) is left out."""
        self.stopped = True
        if (m, layout, remat) not in self.unprofiled:
            self.unprofiled.append((m, layout, remat))

    def _point(self, m: int, layout: int, remat: str,
               depth: int | None) -> Figures | None:
        mesh = self.space.meshes[m]
        label, choice = mesh.layouts[layout]
        k = self.settings.levers.base(mesh.option.shape[0]).accumulation_steps
        key = self.key(self._signatures[depth], mesh, choice,
                       mesh.option.mesh, remat, k)
        began = time.monotonic()
        figures = self.cache.get(key, Figures.read)
        cached = figures is not None
        if figures is None:
            figures = self._compile(m, layout, remat, depth, k)
            if figures is not None:
                self.cache.put(key, figures.stored())
        self.log.append({"mesh": m, "layout": layout, "label": label,
                         "remat": remat, "depth": depth, "k": k,
                         "figures": figures, "cached": cached,
                         "seconds": time.monotonic() - began})
        if self.progress is not None:
            self.progress(len(self.log),
                          *((figures.memory, figures.plain()["traffic"])
                            if figures else ()))
        return figures

    def key(self, signature: dict, mesh: Any, choice: tuple,
            keras_mesh: Any, remat: Any, k: int) -> str | None:
        """The cache key of a compile (`cache.py` says what it holds)."""
        return key_of({**self._fixed_key, "model": signature,
                       "rules": mesh.space.all_rules(choice),
                       "mesh": describe_mesh(keras_mesh)["devices"],
                       "shape": list(mesh.option.shape),
                       "remat": remat if isinstance(remat, str) else
                       list(remat), "k": k,
                       "target": _target(self.settings, mesh)})

    def _compile(self, m: int, layout: int, remat: str, depth: int | None,
                 k: int) -> Figures | None:
        from keras.distribution import ModelParallel

        s = self.settings
        mesh = self.space.meshes[m]
        dist = ModelParallel(
            layout_map=mesh.space.layout_map(mesh.layouts[layout][1]),
            batch_dim_name=s.step.batch_dim)
        try:
            r = cost.layout_cost(
                s.models[depth], dist, s.step.batch_size, s.step.optimizer,
                s.step.loss, s.step.input_shapes,
                max(s.left(s.profile_end), 0.01), quick=True, remat=remat,
                accumulation_steps=k, topology=s.machine, measure=False,
                trace=True)
        except KerasmeshError as e:
            if e.kind == kinds.TIMEOUT:
                self._stop(m, layout, remat)
                return None
            if e.kind != kinds.COMPILE:
                raise
            self.profiles[(m, layout)].failed = str(e)
            return None
        return Figures.of(r)


def _target(settings: Settings, mesh: Any) -> dict:
    """What compiles the mesh's steps, for the cache key."""
    t = choose(settings.machine, mesh.option.mesh)
    return {"label": t.label, "config": t.config}
