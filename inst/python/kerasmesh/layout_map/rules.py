"""Layout maps: rules from variable-path regexes to mesh axes."""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

from ..core.axes import check_axes, format_axes
from ..core.errors import KerasmeshError
from ..core.patterns import check_safe
from ..core.resolve import RuleResolver, ambiguous_rule, rule_keys
from ..core import kinds, text
from ..mesh.device_mesh import describe_mesh
from ..core.text import string


def check_key(key: Any) -> re.Pattern:
    """A rule key must be a string that compiles as a regular expression
    and can't backtrack without bound (`patterns.check_safe()`)."""
    if not isinstance(key, str) or key == "":
        raise KerasmeshError(
            kinds.LAYOUT_KEY, "A layout rule's key must be a non-empty string.",
            received=key)
    try:
        pattern = re.compile(key)
    except re.error as e:
        raise KerasmeshError(
            kinds.LAYOUT_KEY,
            f"Layout key {string(key)} must be a valid regular expression.",
            x=f"{e.msg} at position {e.pos}.",
            i="Escape literal brackets and dots with a backslash."
        ) from e
    check_safe(key)
    return pattern


def new_layout_map(mesh: Any, keys: Iterable[Any] = (),
                   layouts: Iterable[Any] = ()) -> dict:
    """A validated `keras.distribution.LayoutMap` with the given rules."""
    import keras

    describe_mesh(mesh)
    layout_map = keras.distribution.LayoutMap(mesh)
    for key, axes in zip(list(keys), list(layouts)):
        _add_rule(layout_map, key, axes)
    return describe_layout_map(layout_map)


def _add_rule(layout_map: Any, key: Any, axes: Any) -> None:
    check_key(key)
    if key in rule_keys(layout_map):
        raise KerasmeshError(
            kinds.LAYOUT_KEY_EXISTS,
            f"Layout key {string(key)} already exists.",
            x=f"Its layout is {format_axes(layout_map[key].axes)}.",
            i="Remove it first (assign NULL), then assign the new "
              "layout.")
    layout_map[key] = check_axes(axes, layout_map.device_mesh.axis_names,
                                 key)


def copy_layout_map(layout_map: Any) -> Any:
    """A new Keras LayoutMap with the same mesh and rules."""
    import keras

    new = keras.distribution.LayoutMap(layout_map.device_mesh)
    for key in layout_map:
        check_key(key)  # the map may have changed since it was described
        new[key] = tuple(layout_map[key].axes)
    return new


def set_rule(layout_map: Any, key: Any, axes: Any) -> dict:
    """A copy of `layout_map` with one more rule; the input is unchanged."""
    new = copy_layout_map(layout_map)
    _add_rule(new, key, axes)
    return describe_layout_map(new)


def set_rules(layout_map: Any, keys: Iterable[Any],
              layouts: Iterable[Any]) -> dict:
    """A copy of `layout_map` with several rules set in one pass, for R's
    `lm[keys] <- layouts`; the input is unchanged.

    Args:
        layout_map: a Keras `LayoutMap`.
        keys: rule keys, applied in order.
        layouts: one per key: None removes the key as `remove_rule()`
            does, anything else adds it as `set_rule()` does.

    Raises:
        KerasmeshError: kind `layout_axes` when the counts differ, else as
            `set_rule()` and `remove_rule()` (the first bad key, in order).
    """
    keys, layouts = list(keys), list(layouts)
    if len(keys) != len(layouts):
        raise KerasmeshError(
            kinds.LAYOUT_AXES,
            f"Assigning {len(keys)} keys needs {len(keys)} layouts.",
            x=f"Received {len(layouts)}.")
    new = copy_layout_map(layout_map)
    added = set()
    for key, axes in zip(keys, layouts):
        if axes is None:
            _drop_rule(new, key)
            added.discard(key)
        elif key in added:
            axes = check_axes(axes, new.device_mesh.axis_names, key)
            raise KerasmeshError(
                kinds.LAYOUT_KEY_EXISTS,
                f"Layout key {string(key)} must be given one layout.",
                x=f"The keys give it twice: {format_axes(new[key].axes)} "
                  f"first, then {format_axes(axes)}.",
                i="Give each key once; a layout of NULL before a key's "
                  "second layout replaces the first.")
        else:
            _add_rule(new, key, axes)
            added.add(key)
    return describe_layout_map(new)


def remove_rule(layout_map: Any, key: Any) -> dict:
    """A copy of `layout_map` without `key`.

    Raises:
        KerasmeshError: kind `layout_key_missing` when the map has no rule
            `key` (a key misspelt would leave its rule in place, unseen).
    """
    new = copy_layout_map(layout_map)
    _drop_rule(new, key)
    return describe_layout_map(new)


def _drop_rule(layout_map: Any, key: Any) -> None:
    """Remove `key` from `layout_map` in place."""
    check_key(key)
    keys = rule_keys(layout_map)
    if key not in keys:
        raise KerasmeshError(
            kinds.LAYOUT_KEY_MISSING,
            f'The layout map has no rule {string(key)} to remove.',
            x=f"Its keys are {text.listing(keys)}." if keys else
              "It has no rules.",
            i="Keys are matched exactly, not as patterns.")
    del layout_map[key]


def lookup(layout_map: Any, path: Any) -> dict:
    """Resolve a path as Keras does: exact key, else one fullmatch.

    Returns:
        {"key": the rule that matched or None, "axes": list or None}.

    Raises:
        KerasmeshError: kind `layout_ambiguous` when several keys match.
    """
    if not isinstance(path, str):
        raise KerasmeshError(
            kinds.LAYOUT_KEY, "A variable path must be a string.",
            received=path)
    # RuleResolver checks the keys: a Keras LayoutMap's never were.
    key, clash = RuleResolver(rule_keys(layout_map)).lookup(path)
    if clash:
        message, bullets = ambiguous_rule(path, clash, "path")
        raise KerasmeshError(kinds.LAYOUT_AMBIGUOUS, message, bullets)
    if key is None:
        return {"key": None, "axes": None}
    return {"key": key, "axes": list(layout_map[key].axes)}


def describe_layout_map(layout_map: Any) -> dict:
    """Plain description of a Keras LayoutMap, with the map and its mesh.

    Its keys are checked as `layout_map()` checks them (`check_key()`): a
    Keras LayoutMap made elsewhere never was.
    """
    from keras.distribution import LayoutMap

    if not isinstance(layout_map, LayoutMap):
        raise KerasmeshError(
            kinds.LAYOUT_MAP, "Expected a Keras `LayoutMap`.",
            received=layout_map)
    keys = rule_keys(layout_map)
    for key in keys:
        check_key(key)
    return {
        "layout_map": layout_map,
        "mesh": describe_mesh(layout_map.device_mesh),
        "keys": keys,
        "axes": [list(layout_map[k].axes) for k in keys],
    }


def rebind(layout_map: Any, mesh: Any) -> Any:
    """`layout_map`'s rules on another mesh of the same axis names (a
    start or fixed rules given for the search's meshes, a layout map moved
    to the devices a cost compiles for); None for None.

    Raises:
        KerasmeshError: kind `mesh_mismatch` when the meshes' axes differ.
    """
    import keras

    if layout_map is None:
        return None
    names = [str(a) for a in layout_map.device_mesh.axis_names]
    wanted = [str(a) for a in mesh.axis_names]
    if sorted(names) != sorted(wanted):
        raise KerasmeshError(
            kinds.MESH_MISMATCH,
            "The layout map must be on a mesh of axes " +
            ", ".join(f'"{a}"' for a in wanted) + ".",
            x=f"Its mesh has axes {', '.join(names)}.")
    out = keras.distribution.LayoutMap(mesh)
    for key in layout_map.keys():
        out[key] = tuple(layout_map[key].axes)
    return out
