"""A ModelParallel distribution that checks each variable's layout as
Keras creates the variable, naming the variable and the rule.

Keras fails inside JAX, without the variable's path, when a layout is
longer than a variable's rank or can't divide a dimension, and with a bare
ValueError when several rules match. `CheckedModelParallel` raises the
plan's `KerasmeshError` instead. The guard that patches `keras.Model`'s
methods is `guard.py`'s.
"""

from __future__ import annotations

import functools
from typing import Any

from ..core.backend import require_backend
from ..core.placer import Placer
from ..plan.planner import first_error


@functools.cache
def checked_model_parallel_class() -> type:
    """The `CheckedModelParallel` class (made once Keras is imported)."""
    from keras.distribution import ModelParallel

    class CheckedModelParallel(ModelParallel):
        def get_variable_layout(self, variable):
            if getattr(variable, "_layout", None) is None:
                self._kerasmesh_check(variable)
            return super().get_variable_layout(variable)

        def _kerasmesh_check(self, variable):
            placer = getattr(self, "_kerasmesh_placer", None)
            if placer is None:
                placer = Placer(self._layout_map)
                self._kerasmesh_placer = placer
            error = first_error(placer.variable(variable).problems)
            if error is not None:
                raise error

    return CheckedModelParallel


def checked_model_parallel(layout_map: Any, batch_dim_name: str | None = None,
                           auto_shard_dataset: bool = True) -> Any:
    """A `CheckedModelParallel` distribution."""
    require_backend(("jax",), "A distribution")
    cls = checked_model_parallel_class()
    return cls(layout_map=layout_map, batch_dim_name=batch_dim_name,
               auto_shard_dataset=bool(auto_shard_dataset))
