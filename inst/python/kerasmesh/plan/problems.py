"""Problems grouped by rule and kind, each with a fix the planner checked.

A layout map written for a transformer reports the same problem once per
block: one rule over 18 blocks gives 36 identical lines. `group_problems()`
folds them into one problem per rule and kind, with how many variables it
hits, a compact listing (`decoder_block_{0..17}/attention/{key,value}/
kernel`), the dimension, its size and the axis size. `suggest_fix()` finds
a change to the layout map that works: another layout for the rule, or the
rule split in two when only some of its variables fail, or a new rule for a
big variable that no rule matches. A fix is offered only when planning the
changed map places every variable it touches without a problem and leaves
every other variable where it was.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from ..core.paths import compact_paths, paths_regex, pattern_regex
from ..core.layout_problems import problem
from ..core.placer import check_placement
from ..core.placement import ways
from ..core.text import plural, string
from ..core.resolve import RuleResolver
from ..core import kinds

DEFAULT_SHARE = 0.05
FIXABLE = (kinds.LAYOUT_DIVISIBILITY, kinds.REPLICATED, kinds.BLOCK_OUTPUTS)


# --------------------------------------------------------------------------
# Big variables that no rule matches


# Keras's LoRA factors (`enable_lora()`): "lora_kernel_a", "lora_kernel_b",
# "lora_embeddings_a", ... Replicating them is the usual choice (keras-hub's
# layout maps leave them so): they are small beside the frozen kernel.
_LORA_FACTOR = re.compile(r"(?:^|/)lora_\w+_[ab]$")


def replicated_problems(columns: dict, share: float, n_devices: int
                        ) -> list[dict]:
    """Warnings for unmatched variables over `share` of per-device weights.

    Only variables of rank 2 or more: vectors (biases, normalization
    scales) are small beside their layer's kernel and replicated by design,
    and so are LoRA factors (`lora_kernel_a`, `lora_kernel_b`).

    Args:
        columns: the plan's variable columns.
        share: the share of one device's weights (0 to 1) above which an
            unmatched, replicated variable is reported.
    """
    # With no variable placed by a rule, the layout is data parallel:
    # replicating is what it means.
    if n_devices <= 1 or all(r is None for r in columns["rule"]):
        return []
    total = sum(columns["device_bytes"])
    out = []
    for i, path in enumerate(columns["path"]):
        device = columns["device_bytes"][i]
        # Vectors (biases, norm scales) are left replicated by design.
        if columns["rule"][i] is not None or columns["problem"][i] \
                or len(columns["shape"][i]) < 2 \
                or _LORA_FACTOR.search(path) \
                or total <= 0 or device / total <= share:
            continue
        pct = 100 * device / total
        out.append(problem(
            kinds.REPLICATED, "warning", path, None,
            f'Variable {string(path)} matches no rule and stays replicated on '
            f"every device.",
            [("x", f"It is {pct:.0f}% of what each device holds "
                   f"(more than {100 * share:g}%), copied {n_devices} "
                   "times.")],
            f"replicated, {pct:.0f}% of a device",
            {"share": device / total}))
    return out


# --------------------------------------------------------------------------
# Grouping


def group_problems(problems: Sequence[dict], columns: dict) -> list[dict]:
    """One problem per rule, kind and severity, in order of appearance.

    Returns:
        dicts with `kind`, `severity`, `rule`, `count` (variables),
        `paths` (all of them), `listing` (compact patterns), `message` and
        `bullets` (of the first problem, for problems without a path; made
        for the group otherwise), `dimension`, `size`, `axis`, `axis_size`
        (the first failing dimension, 1-based, or None), and `fix` (None).
    """
    groups: dict[tuple, dict] = {}
    for p in problems:
        if p["path"] is None:
            key = (p["kind"], p["severity"], p["rule"], id(p))
        else:
            key = (p["kind"], p["severity"], p["rule"])
        g = groups.get(key)
        if g is None:
            g = groups[key] = {
                "kind": p["kind"], "severity": p["severity"],
                "rule": p["rule"], "paths": [], "first": p, "facts": [],
            }
        if p["path"] is not None and p["path"] not in g["paths"]:
            g["paths"].append(p["path"])
        g["facts"].append(p.get("facts") or {})
    return [_finish(g) for g in groups.values()]


def _finish(g: dict) -> dict:
    first, paths = g.pop("first"), g["paths"]
    facts = [f for f in g.pop("facts") if "dimension" in f]
    fact = facts[0] if facts else {}
    listing = compact_paths(paths)
    g.update({
        "count": len(paths), "listing": listing,
        "dimension": fact.get("dimension"), "size": fact.get("size"),
        "axis": fact.get("axis"), "axis_size": fact.get("axis_size"),
        "short": first["short"], "fix": None,
        "proposed": (first.get("facts") or {}).get("fix"),
    })
    if len(paths) <= 1:
        g["message"], g["bullets"] = first["message"], first["bullets"]
        return g
    who = f'Rule "{g["rule"]}"' if g["rule"] is not None else "The layout"
    shown = "; ".join(listing[:3]) + (
        f"; and {len(listing) - 3} more" if len(listing) > 3 else "")
    n = plural(len(paths), "variable")
    if g["kind"] == kinds.LAYOUT_DIVISIBILITY:
        sizes = sorted({f["size"] for f in facts})
        dims = sorted({f["dimension"] for f in facts})
        g["message"] = f"{who} can't split {n} evenly."
        g["bullets"] = [
            ["x", f"{shown}: dimension {'/'.join(map(str, dims))} has size "
                  f"{'/'.join(map(str, sizes))}, which mesh axis "
                  f'"{fact["axis"]}" ({fact["axis_size"]}) can\'t divide; '
                  "JAX fails when the variables are created."]]
    elif g["kind"] == kinds.REPLICATED:
        g["message"] = (f"{n} match no rule and stay replicated on every "
                        "device.")
        g["bullets"] = [["x", f"{shown}: each more than its share of what "
                              "a device holds."]]
    else:
        g["message"] = f"{first['message']} ({n})"
        g["bullets"] = [["x", f"{shown}: {first['short']}."]] + \
            [b for b in first["bullets"] if b[0] == "i"]
    return g


# --------------------------------------------------------------------------
# Fixes


def _moved_layout(axes: list, shapes: list[list[int]],
                  sizes: dict[str, int]) -> list | None:
    """`axes` with each failing entry moved to a dimension it divides.

    An entry that no free dimension can take is dropped (that dimension is
    left unsplit). None when the shapes' ranks differ from the layout's.
    """
    rank = len(shapes[0])
    if any(len(s) != rank for s in shapes) or len(axes) > rank:
        return None
    axes = list(axes) + [None] * (rank - len(axes))
    for d in range(rank):
        entry = axes[d]
        if entry is None:
            continue
        split = ways(entry, sizes)
        if all(s[d] % split == 0 for s in shapes):
            continue
        axes[d] = None
        free = [d2 for d2 in range(rank) if axes[d2] is None and d2 != d
                and all(s[d2] % split == 0 for s in shapes)]
        if free:
            best = max(free, key=lambda d2: min(s[d2] for s in shapes))
            axes[best] = entry
    return axes


def _split_layout(shape: list[int], sizes: dict[str, int],
                  batch_dim_name: str) -> list | None:
    """A layout that splits a big variable: model axes first."""
    order = sorted((a for a in sizes if sizes[a] > 1),
                   key=lambda a: (a == batch_dim_name, -sizes[a]))
    axes: list = [None] * len(shape)
    for a in order:
        free = [d for d in range(len(shape))
                if axes[d] is None and shape[d] % ways(a, sizes) == 0]
        if free:
            axes[max(free, key=lambda d: shape[d])] = a
    return axes if any(a is not None for a in axes) else None


def check_fix(rules: dict[str, list], fix: dict, columns: dict,
              sizes: dict[str, int], targets: set[str]) -> bool:
    """Whether `fix` works: plan the changed rules and compare.

    The targets must be placed by a rule, without any problem; every other
    variable must keep its rule's layout.
    """
    before = RuleResolver(list(rules))
    new = {k: v for k, v in rules.items() if k not in fix["remove"]}
    for key, axes in fix["add"]:
        if key in new:
            return False
        new[key] = axes
    try:
        after = RuleResolver(list(new))
    except Exception:  # noqa: BLE001 - a key that does not compile
        return False
    for path, shape in zip(columns["path"], columns["shape"]):
        index, clash = after.resolve(path)
        if clash:
            return False
        rule = None if index is None else after.keys[index]
        axes = None if rule is None else new[rule]
        if path in targets:
            placed = check_placement(path, [int(s) for s in shape], axes, rule,
                                     sizes).as_dict()
            if rule is None or placed["problems"]:
                return False
            continue
        old, _ = before.resolve(path)
        old_axes = None if old is None else rules[before.keys[old]]
        if axes != old_axes:
            return False
    return True


def suggest_fix(group: dict, rules: dict[str, list], columns: dict,
                sizes: dict[str, int], batch_dim_name: str) -> dict | None:
    """A checked change to the rules that removes the group's problems.

    Returns:
        {"remove": keys to remove, "add": [[key, axes]]}, or None.
    """
    if group["kind"] not in FIXABLE:
        return None
    if group["kind"] == kinds.BLOCK_OUTPUTS:
        fix = group["proposed"]
        return fix if check_fix(rules, fix, columns, sizes, set()) else None
    failing = set(group["paths"])
    shapes = {p: [int(s) for s in sh]
              for p, sh in zip(columns["path"], columns["shape"])}
    candidates: list[dict] = []
    if group["kind"] == kinds.REPLICATED:
        for all_numbers in (True, False):
            add = [[paths_regex(_members(pattern, group["paths"]),
                                all_numbers),
                    _split_layout(shapes[_members(pattern,
                                                  group["paths"])[0]],
                                  sizes, batch_dim_name)]
                   for pattern in compact_paths(group["paths"])]
            if all(a[1] is not None for a in add):
                candidates.append({"remove": [], "add": add})
    else:
        rule = group["rule"]
        if rule is None or rule not in rules:
            return None
        matched = [p for p, r in zip(columns["path"], columns["rule"])
                   if r == rule]
        moved = _moved_layout(rules[rule], [shapes[p] for p in failing],
                              sizes)
        if moved is None:
            return None
        passing = [p for p in matched if p not in failing]
        if not passing:
            candidates.append({"remove": [rule], "add": [[rule, moved]]})
        else:
            for all_numbers in (True, False):
                candidates.append({"remove": [rule], "add": [
                    [paths_regex(passing, all_numbers), list(rules[rule])],
                    [paths_regex(sorted(failing, key=matched.index),
                                 all_numbers), moved]]})
        failing = set(matched)
    for fix in candidates:
        if check_fix(rules, fix, columns, sizes, failing):
            return fix
    return None


def _members(pattern: str, paths: Sequence[str]) -> list[str]:
    """The paths that `compact_paths()` wrote as `pattern`."""
    regex = re.compile(pattern_regex(pattern, all_numbers=False))
    return [p for p in paths if regex.fullmatch(p)]


def fix_problems(groups: list[dict], rules: dict[str, list], columns: dict,
                 sizes: dict[str, int], batch_dim_name: str) -> None:
    """Set each group's `fix` (in place), when one checks out."""
    for g in groups:
        g["fix"] = suggest_fix(g, rules, columns, sizes, batch_dim_name)
