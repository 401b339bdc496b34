"""A model's variables for checkpoints: keys, layouts, and whether saved
arrays fit a model (names, shapes, dtypes, the mesh they go onto)."""

from __future__ import annotations

from typing import Any
from collections.abc import Sequence

from ..core.errors import KerasmeshError
from ..core.placement import sharding_placement
from .files import orbax
from ..core import kinds
from ..core.text import plural, string

GROUPS = ("trainable_variables", "non_trainable_variables",
          "optimizer_variables")
WEIGHTS = GROUPS[:2]  # what `weights_only` restores


def keyed_variables(model: Any) -> dict[str, Any]:
    """The model's variables by key "group/path", in GROUPS order.

    Raises:
        KerasmeshError: `checkpoint_model` when the model has no variables.
    """
    if not getattr(model, "variables", None):
        raise KerasmeshError(
            kinds.CHECKPOINT_MODEL, "The model must be built.",
            x="It has no variables yet.",
            i="Give it an `Input()`, or call it on data once.")
    groups = {"trainable_variables": model.trainable_variables,
              "non_trainable_variables": model.non_trainable_variables}
    opt = getattr(model, "optimizer", None)
    if opt is not None:
        groups["optimizer_variables"] = opt.variables
    out = {}
    for group in GROUPS:
        for v in groups.get(group, []):
            out[f"{group}/{v.path}"] = v
    return out


def build_optimizer(model: Any) -> None:
    """Create the optimizer's slots (under the current distribution, they
    take their variable's layout), as the first training step would."""
    opt = getattr(model, "optimizer", None)
    if opt is not None and not opt.built:
        opt.build(model.trainable_variables)


def nest(flat: dict[str, Any]) -> dict:
    """{"a/b/c": x} as {"a": {"b": {"c": x}}}."""
    out: dict = {}
    for key, value in flat.items():
        parts = key.split("/")
        node = out
        for part in parts[:-1]:
            node = node.setdefault(part, {})
        node[parts[-1]] = value
    return out


def flatten(tree: Any, prefix: str = "") -> dict[str, Any]:
    """The inverse of `nest()`."""
    if not isinstance(tree, dict):
        return {prefix.rstrip("/"): tree}
    out = {}
    for key, value in tree.items():
        out.update(flatten(value, f"{prefix}{key}/"))
    return out


def describe_layout(sharding: Any, shape: Sequence[int]) -> dict:
    """Mesh and axes per dimension of a placed array's sharding."""
    placement = sharding_placement(sharding, shape)
    if not placement.mesh:
        return {"axes": [None] * placement.rank, "mesh_shape": None,
                "mesh_axes": None}
    return {"axes": [list(e) if isinstance(e, tuple) else e
                     for e in placement.entries],
            "mesh_shape": [s for _, s in placement.mesh],
            "mesh_axes": [a for a, _ in placement.mesh]}


def describe_variables(variables: dict[str, Any]) -> list[dict]:
    out = []
    for key, v in variables.items():
        group, _, path = key.partition("/")
        shape = [int(s) for s in v.shape]
        out.append(dict({"key": key, "group": group, "path": path,
                         "shape": shape, "dtype": str(v.dtype)},
                        **describe_layout(v.value.sharding, shape)))
    return out


_OPTIMIZER = "optimizer_variables"


def mismatch(kind: str, message: str, bullets: list,
             keys: list[str]) -> KerasmeshError:
    """A mismatch error; when only optimizer variables differ, it says
    why that happens and how to restore the weights alone."""
    if keys and all(k.startswith(_OPTIMIZER + "/") for k in keys):
        return KerasmeshError(kind, message, bullets + [
            ("i", "Only the optimizer's state differs: its slots follow "
                  "the variables it was built for (a model quantized after "
                  "`compile()` keeps slots of its float kernels, another "
                  "optimizer has other slots)."),
            ("i", "Pass `weights_only = TRUE` to restore the weights "
                  "alone; the optimizer then starts afresh.")])
    return KerasmeshError(kind, message, bullets + [
        ("i", "Build the model as it was built for the checkpoint (the same "
              "layers, names, sizes and dtypes), then restore.")])


def check_match(saved: dict, variables: dict, groups: Any = None,
                names: dict | None = None) -> None:
    """Same names, shapes and dtypes in the checkpoint and the model, for
    `groups` (the weights alone, for `weights_only`; by default the
    groups the model has). Keys are match keys (`match_key()`); `names`
    gives each the key to show (the checkpoint's, as `checkpoint_info()`
    lists it, or else the model's).

    Raises:
        KerasmeshError: `checkpoint_variables` (names differ, or the
            checkpoint has optimizer state and the model no optimizer),
            `checkpoint_shape` or `checkpoint_dtype` (a shape or a dtype
            differs), naming the variable.
    """
    names = names or {}

    def show(key: str) -> str:
        return names.get(key, key)

    for key, v in variables.items():
        if key in saved:
            check_array(show(key), saved[key], v)
    if groups is None:
        groups = {k.partition("/")[0] for k in variables}
    wanted = {k for k in saved if k.partition("/")[0] in groups}
    # Optimizer state and no optimizer: said once the weights match.
    state = [k for k in wanted if k.startswith(_OPTIMIZER + "/")]
    no_optimizer = bool(state) and \
        not any(k.startswith(_OPTIMIZER + "/") for k in variables)
    missing = [k for k in variables if k not in saved]
    extra = sorted(wanted - set(variables) - set(state if no_optimizer
                                                   else ()))
    if missing or extra:
        bullets = []
        if missing:
            bullets.append(("x", f"The checkpoint has no variable "
                                 f"{string(show(missing[0]))}" +
                                 (f" (and {len(missing) - 1} more)."
                                  if len(missing) > 1 else ".")))
        if extra:
            bullets.append(("x", f"The model has no variable "
                                 f"{string(show(extra[0]))}" +
                                 (f" (and {len(extra) - 1} more)."
                                  if len(extra) > 1 else ".")))
        raise mismatch(kinds.CHECKPOINT_VARIABLES, "The checkpoint's variables "
                       "must match the model's.", bullets, missing + extra)
    if no_optimizer:
        raise KerasmeshError(
            kinds.CHECKPOINT_VARIABLES, "The model must have an optimizer "
            "to restore the checkpoint's optimizer state.",
            x=f"The checkpoint holds "
              f"{plural(len(state), 'optimizer variable')}; the model has "
              "no optimizer (`compile()` makes one).",
            i="Compile the model before restoring, or pass "
              "`weights_only = TRUE` to restore its weights alone.")


def check_array(key: str, saved: Any, v: Any) -> None:
    """One saved array against the model's variable: shape, then dtype."""
    shape = tuple(int(s) for s in saved.shape)
    if shape != tuple(int(s) for s in v.shape):
        raise mismatch(
            kinds.CHECKPOINT_SHAPE, f"Variable {string(key)} must have the "
            "shape it was saved with.",
            [("x", f"Saved {_shape(shape)}; the model's is "
                   f"{_shape(v.shape)}.")], [key])
    if str(saved.dtype) != str(v.dtype):
        raise mismatch(
            kinds.CHECKPOINT_DTYPE, f"Variable {string(key)} must have the "
            "dtype it was saved with.",
            [("x", f"Saved as {saved.dtype}; the model's is {v.dtype}.")],
            [key])


def _shape(shape) -> str:
    return "(" + ", ".join(str(int(s)) for s in shape) + ")"


def target_sharding(v: Any) -> Any:
    """Where a variable goes: its layout, else where it lives now."""
    layout = getattr(v, "_layout", None)
    backend_layout = getattr(layout, "backend_layout", layout)
    if backend_layout is not None and hasattr(backend_layout, "spec"):
        return backend_layout
    return v.value.sharding


def check_capacity(saved: dict, variables: dict, targets: dict) -> None:
    """Every saved shape divides evenly over its target layout.

    Raises:
        KerasmeshError: `checkpoint_layout`, naming the variable.
    """
    for key in variables:
        shape = [int(s) for s in saved[key].shape]
        placement = sharding_placement(targets[key], shape)
        for dim, (n, w) in enumerate(zip(shape, placement.splits)):
            if dim in placement.indivisible:
                raise KerasmeshError(
                    kinds.CHECKPOINT_LAYOUT, f"Variable {string(key)} must "
                    "fit the mesh it is restored onto.",
                    x=f"Dimension {dim + 1} ({n}) can't be split "
                      f"{w} ways.",
                    i="Restore onto a mesh whose axes divide the "
                      "saved shapes.")


def match_key(key: str) -> str:
    """The key variables are matched by: optimizer variables without the
    optimizer's name, which Keras makes unique per session ("adam_1")."""
    group, _, path = key.partition("/")
    if group == "optimizer_variables":
        path = path.partition("/")[2] or path
    return f"{group}/{path}"


def abstract_tree(meta: Any, wanted: dict, targets: dict,
                  prefix: str = "") -> Any:
    """What to load, shaped as the saved tree (empty groups kept, as
    Orbax needs): the saved shape and dtype with the model's placement
    for each array the model has, `PLACEHOLDER` (skip) for the others.
    `wanted` maps saved keys to the model's (`match_key()`)."""
    if isinstance(meta, dict):
        return {k: abstract_tree(v, wanted, targets, f"{prefix}{k}/")
                for k, v in meta.items()}
    key = wanted.get(prefix.rstrip("/"))
    if key is None:
        return orbax().PLACEHOLDER
    import jax

    return jax.ShapeDtypeStruct(tuple(meta.shape), meta.dtype,
                                sharding=targets[key])
