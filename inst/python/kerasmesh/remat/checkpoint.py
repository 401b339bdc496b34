"""One block's call, checkpointed with `jax.checkpoint`.

`checkpointed_call(layer, policy)` returns a function to set as the
layer's own `call` (an attribute of that one instance: no class of Keras
or keras-hub changes). When the block runs inside Keras's stateless
training step (a `StatelessScope` maps variables to traced values, as
`Model.stateless_call()` does), the function:

* flattens the call's arguments and keeps only arrays as the checkpoint's
  inputs; everything else (strings, None, bools, training flags, Python
  numbers, masks given as None, attention caches left out) stays static,
  closed over, as `jax.checkpoint` requires: it takes arrays only;
* passes the current values of the block's own variables (its weights,
  and the state of its seed generators) as inputs too, and inside runs the
  block's call in a nested `StatelessScope` that maps them to the
  checkpoint's inputs, so the gradient reaches them through the checkpoint
  rather than as closed-over constants;
* returns the block's outputs, the new values of any variable it updated
  (a seed generator's state, a moving mean) and the losses it added, and
  hands the updates and losses on to the outer scope.

Outside a stateless scope, or with no traced array among the arguments
(an eager call), the block's own call runs as it is: rematerialization
means something only where JAX differentiates a trace. Keras's own
`keras.remat` (`RematScope`) wraps the whole call, non-array arguments
included, which is why it fails on keras-hub's transformer layers.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .blocks import MARK


def _inner_scope(outer: Any) -> Any:
    """A StatelessScope inside `outer` that sees `outer`'s values and
    records each update it receives (`updates`: id -> (variable, value))."""
    from keras.src.backend.common.stateless_scope import StatelessScope

    class BlockScope(StatelessScope):
        def __init__(self):
            super().__init__(collect_losses=outer.collect_losses,
                             initialize_variables=outer.initialize_variables)
            self.state_mapping = dict(outer.state_mapping)
            self.updates = {}

        def add_update(self, update):
            super().add_update(update)
            self.updates[id(update[0])] = update

    return BlockScope()


def _split(args: tuple, kwargs: dict) -> tuple[list, Any, list[int]]:
    """The leaves of (args, kwargs), their structure, and where the arrays
    are (the checkpoint's inputs)."""
    import jax

    leaves, treedef = jax.tree_util.tree_flatten((args, kwargs))
    return leaves, treedef, [i for i, x in enumerate(leaves)
                             if isinstance(x, jax.Array)]


def _traced(leaves: list, where: list[int]) -> bool:
    import jax

    return any(isinstance(leaves[i], jax.core.Tracer) for i in where)


def checkpointed_call(layer: Any, policy: Any, choice: str) -> Callable:
    """A call for `layer` that runs its current call under
    `jax.checkpoint(policy=policy)` (see the module's docstring), marked
    with `choice` (`blocks.MARK`)."""
    import jax
    from keras.src.backend.common.stateless_scope import get_stateless_scope

    original = layer.call

    def call(*args, **kwargs):
        outer = get_stateless_scope()
        leaves, treedef, where = _split(args, kwargs)
        if outer is None or not _traced(leaves, where):
            return original(*args, **kwargs)
        own = [v for v in layer.variables
               if outer.get_current_value(v) is not None]
        updated: list = []
        inner_losses: list = []

        def block(arrays: list, values: list) -> tuple:
            full = list(leaves)
            for i, a in zip(where, arrays):
                full[i] = a
            a, k = jax.tree_util.tree_unflatten(treedef, full)
            scope = _inner_scope(outer)
            for v, value in zip(own, values):
                scope.state_mapping[id(v)] = value
            with scope:
                out = original(*a, **k)
            updated[:] = [v for v, _ in scope.updates.values()]
            inner_losses[:] = [id(x) for x in scope.losses]
            return (out, [x for _, x in scope.updates.values()],
                    list(scope.losses))

        out, news, losses = jax.checkpoint(block, policy=policy)(
            [leaves[i] for i in where],
            [outer.get_current_value(v) for v in own])
        for v, value in zip(updated, news):
            outer.add_update((v, value))
        _hand_on_losses(layer, outer, losses, set(inner_losses))
        return out

    setattr(call, MARK, choice)
    call.__wrapped__ = original
    return call


def _hand_on_losses(layer: Any, outer: Any, losses: list,
                    inner: set[int]) -> None:
    """Give the outer scope the losses the block added, counted as the
    block's own: Keras finds a layer's losses in the scope by id, so the
    ids of the traced losses inside (`inner`), which a later array may
    reuse, are dropped from the block's layers first."""
    for sub in layer._flatten_layers(include_self=True, recursive=True):
        own = getattr(sub, "_loss_ids", None)
        if own:
            own.difference_update(inner)
    ids = getattr(layer, "_loss_ids", None)
    for x in losses:
        outer.add_loss(x)
        if ids is not None:
            ids.add(id(x))
