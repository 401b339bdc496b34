"""Scopes for building Keras objects without a distribution or values.

Context managers in the style of Keras's own `Distribution.scope()`: the
previous state is remembered on entry and restored on exit, on every path.
"""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Iterator


@contextlib.contextmanager
def no_distribution() -> Iterator[None]:
    """No global Keras distribution inside; the previous one after."""
    import keras

    previous = keras.distribution.distribution()
    if previous is not None:
        keras.distribution.set_distribution(None)
    try:
        yield
    finally:
        if previous is not None:
            keras.distribution.set_distribution(previous)


@contextlib.contextmanager
def shape_only() -> Iterator[None]:
    """Create Keras variables with shapes but no values.

    Inside, variables are created as in `keras.StatelessScope`: their
    initialization is deferred, so nothing is allocated. Unlike a plain
    StatelessScope, leaving does not initialize them either (Keras's list
    of variables waiting for values is put back as it was), and no global
    distribution is in effect, so no layout is applied. Variables created
    inside stay uninitialized: use them for their paths, shapes and dtypes
    only.
    """
    import keras
    from keras.src.backend.common import global_state

    pending = list(global_state.get_global_attribute(
        "uninitialized_variables", []) or [])
    with no_distribution():
        try:
            with keras.StatelessScope(initialize_variables=False):
                yield
        finally:
            global_state.set_global_attribute("uninitialized_variables",
                                              pending)


@contextlib.contextmanager
def compile_outside_stateless_scope() -> Iterator[None]:
    """Let `Model.compile()`, and optimizers, run inside `shape_only()`.

    `compile()` creates small variables from values (the optimizer's
    iteration count and learning rate), which a StatelessScope refuses
    ("attempting to create a variable while in a stateless scope"), so a
    builder that compiles its model (as training code does) could not be
    planned. So does making an optimizer before `compile()`: a builder's
    `keras.optimizers.Adam(1e-3)`, or a keras-hub task (`GemmaCausalLM`)
    whose constructor compiles itself with an optimizer its own `compile()`
    makes. Inside this scope `keras.Model.compile` and Keras's optimizer
    constructor run with the stateless scope lifted, as if called after
    the build; those scalars are allocated, the model's weights still are
    not. Keras's own methods are back on exit, on every path.
    """
    import keras
    from keras.src.optimizers.base_optimizer import BaseOptimizer

    with _lifted(keras.Model, "compile"), _lifted(BaseOptimizer, "__init__"):
        yield


@contextlib.contextmanager
def _lifted(cls: type, name: str) -> Iterator[None]:
    """`cls.<name>` runs without the stateless scope while inside."""
    from keras.src.backend.common import global_state

    own = cls.__dict__.get(name)
    keras_method = getattr(cls, name)

    @functools.wraps(keras_method)
    def method(self, *args, **kwargs):
        scope = global_state.get_global_attribute("stateless_scope")
        global_state.set_global_attribute("stateless_scope", None)
        try:
            return keras_method(self, *args, **kwargs)
        finally:
            global_state.set_global_attribute("stateless_scope", scope)

    setattr(cls, name, method)
    try:
        yield
    finally:
        if own is not None:
            setattr(cls, name, own)
        else:
            delattr(cls, name)
