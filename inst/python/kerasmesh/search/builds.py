"""The models a search builds agree with each other.

`search_layout()` calls the builder several times: once per depth it
costs (1 and 2 blocks, or the whole model), once more at full depth to
verify, and once to see that the paths are stable. The rules it finds are
for the shapes it costed, so a builder whose variables change shape from
one call to the next (a counter, a random width), or whose variables
change shape with the number of blocks (a width computed from it), is an
error naming the variable and both shapes, before anything is misplaced.
"""

from __future__ import annotations

from typing import Any

from ..core.errors import KerasmeshError, warn
from ..cost.compare import build_model
from ..core.text import format_shape, string
from ..core.placement import model_variables, variable_shape
from ..core.text import plural
from ..core import kinds


def shape_changes(first: Any, again: Any) -> list[tuple[str, list, list]]:
    """`(path, shape in first, shape in again)` for each variable path
    both models have, with different shapes."""
    shapes = {v.path: variable_shape(v) for v in model_variables(first)}
    return [(v.path, shapes[v.path], variable_shape(v))
            for v in model_variables(again)
            if v.path in shapes and shapes[v.path] != variable_shape(v)]


def check_rebuild(first: Any, again: Any) -> None:
    """Raise when building again gave another number of variables, or
    variables of other shapes (by position, as paths may be renumbered).

    Raises:
        KerasmeshError: kind `search_builder`.
    """
    a, b = model_variables(first), model_variables(again)
    way_out = ("Make the builder build the same model on every call (no "
               "counters, random sizes or global state), and search again.")
    if len(a) != len(b):
        raise KerasmeshError(
            kinds.SEARCH_BUILDER, "`model` must build the same model each "
            "time it is called.",
            x=f"It built {plural(len(a), 'variable')}, then {len(b)}.",
            i=way_out)
    for u, v in zip(a, b):
        if variable_shape(u) != variable_shape(v):
            again_path = "" if u.path == v.path else f' (as "{v.path}")'
            raise KerasmeshError(
                kinds.SEARCH_BUILDER, "`model` must build the same model "
                "each time it is called.",
                x=f'Variable "{u.path}" had shape '
                  f"{format_shape(variable_shape(u))}, then "
                  f"{format_shape(variable_shape(v))}{again_path}.",
                i=way_out)


def check_depths(models: dict) -> None:
    """Raise when a variable of one path has other shapes at the depths
    built (`{blocks: model}`, in increasing depth).

    Raises:
        KerasmeshError: kind `search_builder`.
    """
    built = [(d, m) for d, m in models.items() if d is not None]
    for (d1, m1), (d2, m2) in zip(built, built[1:]):
        changed = shape_changes(m1, m2)
        if changed:
            path, s1, s2 = changed[0]
            raise KerasmeshError(
                kinds.SEARCH_BUILDER, "With `blocks`, `model` must build "
                "variables of the same shapes at every number of blocks.",
                x=f'Variable {string(path)} has shape {format_shape(s1)} with '
                  f"{plural(d1, 'block')} and {format_shape(s2)} with {d2}"
                  + (f" ({plural(len(changed) - 1, 'more variable')} too)"
                     if len(changed) > 1 else "") + ".",
                i="Only the number of blocks may depend on the builder's "
                  "argument: keep widths, heads and the vocabulary the "
                  "same, or search without `blocks`.")


def check_paths_stable(model: Any, models: dict, rules: list,
                       seconds: float) -> None:
    """Warn when a builder gives its variables other paths on its next
    run (Keras numbers unnamed layers): the rules found would match
    nothing in the user's next build. Other shapes are an error
    (`check_rebuild()`). Skipped for a built model, a layout without
    rules, or with under a second left."""
    depth, first = next(iter(models.items()))
    if not rules or first is model or seconds < 1:
        return
    try:
        again = build_model(model if depth is None else
                            (lambda: model(depth)), seconds)
    except KerasmeshError as e:
        if e.kind == kinds.TIMEOUT:
            return
        raise
    check_rebuild(first, again)
    moved = [(a, b) for a, b in zip(model_variables(first),
                                    model_variables(again))
             if a.path != b.path]
    if not moved:
        return
    a, b = moved[0]
    warn(kinds.SEARCH_UNSTABLE_PATHS,
         "The model's variables get other paths each time it is built.",
         [("x", f'The search built "{a.path}"; the next build has '
                f'"{b.path}", which the found rules don\'t match.'),
          ("i", "Name the model and its layers (`name =`) so that the "
                "rules match every build, and search again.")])
