"""Placement: where one tensor goes on a mesh, and what each device holds.

`Placement` is the only code that turns a layout (one entry per
dimension: None, a mesh axis, or several) with a shape and a mesh into
per-dimension axes, split counts, the shard shape, copies (replication over
the mesh axes the layout leaves unused) and bytes per device. Model
variables and optimizer slots alike are placed with it; nothing else reads
a layout's axes.

How to get a placement:

- One tensor under one layout: ``Placement.of(shape, layout,
  mesh_sizes(mesh), itemsize)``, with `layout` a `TensorLayout`'s axes
  (``layout_map[key].axes``) or None (replicated); a shorter layout is
  padded with None, as Keras pads it.
- One placed array: ``sharding_placement(array.sharding, array.shape,
  array.dtype.itemsize)``.
- One variable or optimizer variable under a layout map, with the rule
  that decides it and what goes wrong: ``Placer(layout_map).variable(v)``
  (`core/placer.py`); an optimizer slot takes its model
  variable's placement (``plan/placements.py``:
  ``optimizer_placements()``).
- A whole model, with its optimizer's variables: ``place_model(model,
  layout_map, optimizer)`` (``plan/placements.py``), a `ModelPlacement`
  whose `variables` and `optimizer` map each path to its placement.

Properties are ints and tuples (the derived ones computed once per
placement); converting for R (floats for byte counts and shapes) happens
where R is answered.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cached_property
from typing import Any
from collections.abc import Mapping, Sequence

from .errors import KerasmeshError
from . import kinds

# The words (core/placer.py has the rest): a dimension's `AxisNames` are
# the mesh axes that split it, () for none; a `Layout` is one tensor's
# entries, one per dimension: None, an axis name, or a tuple of names.
AxisNames = tuple[str, ...]
Layout = tuple


def entry_axes(entry: Any) -> AxisNames:
    """The mesh axes of one layout entry: None, a name or several names."""
    if entry is None:
        return ()
    if isinstance(entry, (tuple, list)):
        return tuple(str(a) for a in entry)
    return (str(entry),)


def ways(entry: Any, sizes: Mapping[str, int]) -> int:
    """How many ways one layout entry splits its dimension (axes the mesh
    lacks count once)."""
    return math.prod(sizes.get(a, 1) for a in entry_axes(entry))


def mesh_sizes(mesh: Any) -> dict[str, int]:
    """{axis name: size} of a Keras DeviceMesh or a JAX Mesh."""
    shape = mesh.shape
    if isinstance(shape, Mapping):  # a JAX Mesh: {name: size}
        return {str(a): int(s) for a, s in shape.items()}
    return {str(a): int(s) for a, s in zip(mesh.axis_names, shape)}


def itemsize(dtype: Any) -> int:
    """Bytes per element of a dtype name ("float32": 4, "bfloat16": 2).

    Raises:
        KerasmeshError: kind `dtype` for a name that is not a data type.
    """
    import jax.numpy as jnp

    try:
        return int(jnp.dtype(str(dtype)).itemsize)
    except TypeError as e:
        raise KerasmeshError(
            kinds.DTYPE, "`dtype` must name a data type.",
            received=dtype, i='For example "float32" or "bfloat16".') from e


def variable_shape(variable: Any) -> list[int]:
    """A variable's shape as Python ints."""
    return [int(s) for s in variable.shape]


def model_variables(model: Any) -> list:
    """A model's variables, each once (shared layers list them twice)."""
    seen, out = set(), []
    for v in model.variables:
        if id(v) not in seen:
            seen.add(id(v))
            out.append(v)
    return out


def _is_int(x: Any) -> bool:
    return isinstance(x, int) and not isinstance(x, bool)


@dataclass(frozen=True)
class Placement:
    """One tensor's placement on a mesh.

    Attributes:
        shape: the tensor's shape, ints >= 0.
        axes: per dimension, the mesh axes that split it (() for none).
        mesh: (axis name, size) pairs, in the mesh's order; () for an
            array on one device.
        itemsize: bytes per element.

    Raises (at construction):
        TypeError: a shape, size or itemsize that is not an int.
        ValueError: a negative dimension, a size or itemsize below 1, one
            entry per dimension not given, or an axis the mesh lacks.

    A mesh axis used for two dimensions is kept (JAX refuses it when it
    places the array; `repeated` names it, and it counts once in `copies`).
    """

    shape: tuple[int, ...]
    axes: tuple[AxisNames, ...]
    mesh: tuple[tuple[str, int], ...] = ()
    itemsize: int = 1

    def __post_init__(self) -> None:
        if not all(_is_int(s) for s in self.shape):
            raise TypeError(f"shape must be ints, not {self.shape!r}")
        if any(s < 0 for s in self.shape):
            raise ValueError(f"shape must be >= 0, not {self.shape!r}")
        if not all(_is_int(s) and s >= 1 for _, s in self.mesh):
            raise ValueError(f"mesh sizes must be ints >= 1: {self.mesh!r}")
        if not _is_int(self.itemsize) or self.itemsize < 1:
            raise ValueError(f"itemsize must be an int >= 1, not "
                             f"{self.itemsize!r}")
        if len(self.axes) != len(self.shape):
            raise ValueError(f"{len(self.axes)} layout entries for rank "
                             f"{len(self.shape)}")
        unknown = [a for names in self.axes for a in names
                   if a not in self.sizes]
        if unknown:
            raise ValueError(f"axis {unknown[0]!r} is not a mesh axis "
                             f"({list(self.sizes)})")

    # -- constructors

    @classmethod
    def of(cls, shape: Sequence[int], layout: Sequence[Any] | None,
           sizes: Mapping[str, int], itemsize: int = 1) -> Placement:
        """The placement of `shape` under `layout` (None: replicated).

        A layout shorter than the shape is padded with None, as Keras pads
        it; a longer one raises ValueError.
        """
        shape = tuple(int(s) for s in shape)
        entries = [] if layout is None else list(layout)
        if len(entries) > len(shape):
            raise ValueError(f"{len(entries)} layout entries for rank "
                             f"{len(shape)}")
        entries += [None] * (len(shape) - len(entries))
        return cls(shape, tuple(entry_axes(e) for e in entries),
                   tuple((str(a), int(s)) for a, s in sizes.items()),
                   int(itemsize))

    @classmethod
    def replicated(cls, shape: Sequence[int], sizes: Mapping[str, int],
                   itemsize: int = 1) -> Placement:
        """A whole copy of `shape` on every device of the mesh."""
        return cls.of(shape, None, sizes, itemsize)

    # -- the mesh

    @cached_property
    def sizes(self) -> dict[str, int]:
        """{axis name: size} of the mesh."""
        return dict(self.mesh)

    @property
    def devices(self) -> int:
        """The number of devices of the mesh."""
        return math.prod(s for _, s in self.mesh)

    # -- the layout

    @property
    def rank(self) -> int:
        return len(self.shape)

    @property
    def entries(self) -> list[Any]:
        """The layout as Keras writes it: per dimension None, an axis
        name, or a tuple of names."""
        return [None if not a else a[0] if len(a) == 1 else a
                for a in self.axes]

    @property
    def labels(self) -> list[str | None]:
        """Per dimension None, an axis name, or names joined with "+"."""
        return ["+".join(a) if a else None for a in self.axes]

    @cached_property
    def used_axes(self) -> AxisNames:
        """The mesh axes the layout uses, each once, in order."""
        return tuple(dict.fromkeys(a for names in self.axes for a in names))

    @property
    def repeated(self) -> AxisNames:
        """Mesh axes used more than once (JAX refuses them), in the order
        they repeat."""
        seen: set[str] = set()
        out: list[str] = []
        for a in (a for names in self.axes for a in names):
            if a in seen and a not in out:
                out.append(a)
            seen.add(a)
        return tuple(out)

    # -- the arithmetic

    @cached_property
    def splits(self) -> tuple[int, ...]:
        """How many ways each dimension is split."""
        sizes = self.sizes
        return tuple(ways(a, sizes) for a in self.axes)

    @cached_property
    def shard_shape(self) -> tuple[int, ...]:
        """The shape of the shard one device holds (rounded up where a
        split does not divide its dimension)."""
        return tuple(-(-n // k) for n, k in zip(self.shape, self.splits))

    @property
    def indivisible(self) -> tuple[int, ...]:
        """The dimensions (0-based) that their split does not divide."""
        return tuple(d for d, (n, k) in enumerate(zip(self.shape,
                                                      self.splits)) if n % k)

    @property
    def divisible(self) -> bool:
        return not self.indivisible

    @property
    def shards(self) -> int:
        """Distinct shards: the product of the used axes' sizes."""
        sizes = self.sizes
        return math.prod(sizes[a] for a in self.used_axes)

    @property
    def copies(self) -> int:
        """How many devices hold each shard."""
        return self.devices // self.shards

    @property
    def items(self) -> int:
        return math.prod(self.shape)

    @property
    def bytes(self) -> int:
        """Bytes of the whole tensor."""
        return self.items * self.itemsize

    @property
    def device_bytes(self) -> int:
        """Bytes of the shard one device holds."""
        return math.prod(self.shard_shape) * self.itemsize

    # -- JAX

    def partition_spec(self) -> Any:
        """The JAX `PartitionSpec` of the layout."""
        from jax.sharding import PartitionSpec

        return PartitionSpec(*self.entries)

    def named_sharding(self, jax_mesh: Any) -> Any:
        """The JAX `NamedSharding` of the layout on `jax_mesh`."""
        from jax.sharding import NamedSharding

        return NamedSharding(jax_mesh, self.partition_spec())


def spec_entries(sharding: Any, rank: int) -> list[Any]:
    """One entry per dimension from a NamedSharding's spec: None (not
    split), an axis name, or a tuple of names."""
    spec = list(getattr(sharding, "spec", ()) or ())
    spec += [None] * (rank - len(spec))
    return [entry if entry else None for entry in spec[:rank]]


def sharding_placement(sharding: Any, shape: Sequence[int],
                       itemsize: int = 1) -> Placement:
    """The placement a JAX sharding gives an array of `shape`.

    An array that is not on a mesh (one device) is a placement on no mesh:
    one device, one copy.
    """
    mesh = getattr(sharding, "mesh", None)
    if mesh is None or not hasattr(mesh, "devices") or \
            not hasattr(sharding, "spec"):
        return Placement.of(shape, None, {}, itemsize)
    return Placement.of(shape, spec_entries(sharding, len(shape)),
                        mesh_sizes(mesh), itemsize)
