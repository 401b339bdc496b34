"""Where one variable goes under one layout, and what goes wrong.

`place()` follows Keras 3.15 and JAX from shapes alone: a missing layout
replicates the variable; a shorter layout is padded with None; a longer one,
an unknown or repeated axis, or a dimension its mesh axes can't divide fails
inside JAX. `resolve_placement()` adds the rule lookup (`RuleResolver`).
Problems are plain dicts (`problem()`); `problems.py` groups them.
"""

from __future__ import annotations

import math
from typing import Any, Sequence

from .axes import format_axes
from .mesh import format_shape
from .resolve import RuleResolver
from . import kinds

ERROR = "error"
WARNING = "warning"
MAX_NAMED = 3


def problem(kind: str, severity: str, path: str | None, rule: str | None,
            message: str, bullets: list[tuple[str, str]], short: str,
            facts: dict | None = None) -> dict:
    """One planning problem as plain values.

    Args:
        kind: the condition kind R raises (`kerasmesh_<severity>_<kind>`).
        severity: `ERROR` (would crash) or `WARNING` (would mis-shard).
        path, rule: the variable and the rule concerned, or None.
        message, bullets: the problem statement and its `(name, text)`
            bullets, as for `KerasmeshError`.
        short: a few words for the plan's `problem` column.
        facts: values R or the fixer needs (dimension, sizes).

    Raises:
        kinds.UnknownKind: when `kind` is not a registered kind of
            `severity`.
    """
    kinds.check(kind, severity)
    return {"kind": kind, "severity": severity, "path": path, "rule": rule,
            "message": message, "bullets": [list(b) for b in bullets],
            "short": short, "facts": facts or {}}


def entry_axes(entry: Any) -> tuple[str, ...]:
    """The mesh axes of one layout entry: None, a name or several names."""
    if entry is None:
        return ()
    if isinstance(entry, (tuple, list)):
        return tuple(str(a) for a in entry)
    return (str(entry),)


def mesh_sizes(mesh: Any) -> dict[str, int]:
    """{axis name: size} of a Keras DeviceMesh."""
    return {str(a): int(s) for a, s in zip(mesh.axis_names, mesh.shape)}


def variable_shape(variable: Any) -> list[int]:
    """A variable's shape as Python ints."""
    return [int(s) for s in variable.shape]


def device_bytes(shard: Sequence[int], size: int) -> float:
    """Bytes one device holds of a shard of `shard` items of `size`."""
    return float(math.prod(shard) * size)


def plural(n: int, word: str) -> str:
    """"1 entry", "2 entries", "3 variables"."""
    if n == 1:
        return f"{n} {word}"
    return f"{n} {word[:-1]}ies" if word.endswith("y") else f"{n} {word}s"


def listing(items: Sequence[str], more: int = 0) -> str:
    """ '"a", "b" and "c"', with "and N more" past MAX_NAMED."""
    quoted = [f'"{i}"' for i in items[:MAX_NAMED]]
    extra = len(items) - len(quoted) + more
    if extra > 0:
        quoted.append(f"{extra} more")
    if len(quoted) == 1:
        return quoted[0]
    return ", ".join(quoted[:-1]) + " and " + quoted[-1]


def _who(rule: str | None) -> str:
    """The subject of a placement problem: the rule, or a bare layout."""
    return f'Rule "{rule}"' if rule is not None else "The layout"


def _dim(d: int) -> str:
    """A dimension as R users count: 1-based."""
    return f"dimension {d + 1}"


def _axis_sizes(names: Sequence[str], sizes: dict[str, int]) -> str:
    return " and ".join(f'"{a}" ({sizes[a]})' for a in names)


def _too_long(path: str, shape: Sequence[int], axes: list,
              rule: str | None) -> dict:
    """The error for a layout with more entries than the variable's rank."""
    rank = len(shape)
    return problem(
        kinds.LAYOUT_RANK, ERROR, path, rule,
        f'{_who(rule)} gives variable "{path}" a layout longer than '
        f"its rank.",
        [("x", f"Layout {format_axes(axes)} has "
               f"{plural(len(axes), 'entry')}, but \"{path}\" has rank "
               f"{rank} (shape {format_shape(shape) if rank else '()'}); "
               "JAX fails when the variable is created."),
         ("i", f"Give one entry per dimension ({rank}), NA for a "
               "dimension that is not split.")],
        f"layout longer than rank {rank}")


def _padded(path: str, shape: Sequence[int], axes: list,
            rule: str | None) -> tuple[list, dict]:
    """A shorter layout as Keras pads it, and the warning saying so."""
    rank = len(shape)
    padded = axes + [None] * (rank - len(axes))
    split = [d for d, e in enumerate(axes) if e is not None]
    what = (f"splits {', '.join(_dim(d) for d in split)}" if split
            else "splits nothing")
    return padded, problem(
        kinds.LAYOUT_RANK, WARNING, path, rule,
        f'{_who(rule)} gives variable "{path}" a layout shorter than '
        f"its rank.",
        [("x", f"Layout {format_axes(axes)} has "
               f"{plural(len(axes), 'entry')}, but \"{path}\" has rank "
               f"{rank} (shape {format_shape(shape) if rank else '()'}); "
               f"Keras pads it to {format_axes(padded)}, which {what}."),
         ("i", "Give one entry per dimension, such as "
               f"{format_axes(([None] * (rank - len(axes))) + axes)} to "
               "split the last dimensions.")],
        f"layout shorter than rank {rank}, padded")


def _indivisible(path: str, rule: str | None, d: int, size: int,
                 names: Sequence[str], sizes: dict[str, int]) -> dict:
    """The error for dimension `d` that its mesh axes can't divide."""
    ways = math.prod(sizes[a] for a in names)
    return problem(
        kinds.LAYOUT_DIVISIBILITY, ERROR, path, rule,
        f'{_who(rule)} can\'t split variable "{path}" evenly.',
        [("x", f"{_dim(d).capitalize()} has size {size}, which "
               f"mesh axis {_axis_sizes(names, sizes)} can't "
               f"divide: {size} is not a multiple of {ways}; "
               "JAX fails when the variable is created."),
         ("i", f"Use a size divisible by {ways}, split another "
               "dimension, or leave this one unsplit (NA).")],
        f"{_dim(d)} ({size}) not divisible by {ways}",
        {"dimension": d + 1, "size": size, "axis": "+".join(names),
         "axis_size": ways})


def _axis_problems(path: str, rule: str | None, shown: str,
                   unknown: list[str], repeated: list[str],
                   sizes: dict[str, int]) -> list[dict]:
    """Errors for axes the mesh lacks and axes used for two dimensions."""
    out = []
    if unknown:
        out.append(problem(
            kinds.LAYOUT_AXES, ERROR, path, rule,
            f'{_who(rule)} splits variable "{path}" over an axis the mesh '
            "doesn't have.",
            [("x", f"Unknown axis {listing(unknown)}; the mesh's axes are "
                   f"{listing(list(sizes))}."),
             ("i", "Use the mesh's axis names, or NA.")],
            f"unknown axis {listing(unknown)}"))
    if repeated:
        out.append(problem(
            kinds.LAYOUT_AXES, ERROR, path, rule,
            f'{_who(rule)} splits variable "{path}" over a mesh axis twice.',
            [("x", f"Axis {listing(repeated)} appears more than once in "
                   f"{shown}; JAX fails when the variable is created."),
             ("i", "Use each mesh axis for at most one dimension.")],
            f"axis {listing(repeated)} used twice"))
    return out


def place(path: str, shape: Sequence[int], axes: Sequence[Any] | None,
          rule: str | None, sizes: dict[str, int], n_devices: int
          ) -> dict:
    """Where one variable goes under one layout, and what goes wrong.

    Follows Keras 3.15 and JAX: a missing layout replicates the variable;
    a shorter layout is padded with None (so its entries split the leading
    dimensions); a longer one fails when JAX places the variable, as does a
    dimension that its mesh axes can't divide evenly. Variables whose layout
    would fail are counted as replicated.

    Returns:
        {"axes", "shard_shape", "copies", "problems"}.
    """
    if axes is None:
        return {"axes": [None] * len(shape), "shard_shape": list(shape),
                "copies": n_devices, "problems": []}
    axes = list(axes)
    shown = format_axes(axes)
    if len(axes) > len(shape):
        return {"axes": axes, "shard_shape": list(shape),
                "copies": n_devices,
                "problems": [_too_long(path, shape, axes, rule)]}
    problems: list[dict] = []
    if len(axes) < len(shape):
        axes, padded = _padded(path, shape, axes, rule)
        problems.append(padded)
    used: list[str] = []
    repeated: list[str] = []
    unknown: list[str] = []
    shard = list(shape)
    for d, entry in enumerate(axes):
        names = entry_axes(entry)
        unknown += [a for a in names if a not in sizes and a not in unknown]
        names = tuple(a for a in names if a in sizes)
        if not names:
            continue
        for a in names:
            if a in used and a not in repeated:
                repeated.append(a)
            used.append(a)
        ways = math.prod(sizes[a] for a in names)
        shard[d] = -(-shape[d] // ways)
        if shape[d] % ways:
            problems.append(_indivisible(path, rule, d, shape[d], names,
                                         sizes))
    problems += _axis_problems(path, rule, shown, unknown, repeated, sizes)
    used = list(dict.fromkeys(used))
    copies = n_devices // math.prod(sizes[a] for a in used) if used \
        else n_devices
    return {"axes": axes, "shard_shape": shard, "copies": copies,
            "problems": problems}


def resolve_placement(resolver: RuleResolver, layout_map: Any, path: str,
                      shape: list[int], sizes: dict[str, int],
                      n_devices: int, what: str = "variable"
                      ) -> tuple[str | None, dict]:
    """The rule and placement of one path, with its problems.

    Returns:
        (the rule's key or None, `place()`'s dict plus "clash": the keys
        of all rules that match when more than one does).
    """
    index, clash = resolver.resolve(path)
    if clash:
        keys = [resolver.keys[i] for i in clash]
        placed = place(path, shape, None, None, sizes, n_devices)
        placed["problems"].append(problem(
            kinds.LAYOUT_AMBIGUOUS, ERROR, path, keys[0],
            f'{what.capitalize()} "{path}" must match at most one layout '
            "rule.",
            [("x", f"It matches rules {listing(keys)}; Keras fails when "
                   "it creates the variable."),
             ("i", "Make the keys more specific, or add the exact path as "
                   "a key (an exact key wins over patterns).")],
            f"matches {len(keys)} rules"))
        placed["clash"] = keys
        return None, placed
    rule = None if index is None else resolver.keys[index]
    axes = None if rule is None else list(layout_map[rule].axes)
    placed = place(path, shape, axes, rule, sizes, n_devices)
    placed["clash"] = []
    return rule, placed
