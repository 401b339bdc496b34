"""Device meshes: validation before Keras, then `keras.distribution.DeviceMesh`."""

from __future__ import annotations

import itertools
import math
from numbers import Real
from collections.abc import Iterator, Sequence
from typing import Any

from ..core.backend import require_backend
from ..core.checks import divisors, is_whole
from ..core.errors import KerasmeshError, VALUE, quoted, received
from ..core.text import format_shape, noun, plural
from ..core import kinds
from .devices import device_type_of, list_devices

MAX_LISTED_SHAPES = 12
MAX_LISTED_RANK = 6


def iter_factorizations(n: int, rank: int) -> Iterator[tuple[int, ...]]:
    """Shapes of `rank` positive integers whose product is `n`, lazily.

    In increasing order of the first size, then the second, and so on.
    Iterative, so a long rank can't exhaust the recursion limit.
    """
    if rank < 1 or n < 1:
        return
    # A stack of (prefix, rest): prefix sizes chosen, rest still to split.
    stack: list[tuple[tuple[int, ...], int]] = [((), n)]
    while stack:
        prefix, rest = stack.pop()
        if len(prefix) == rank - 1:
            yield prefix + (rest,)
            continue
        for d in reversed(divisors(rest)):
            stack.append((prefix + (d,), rest // d))


def factorizations(n: int, rank: int, limit: int | None = None
                   ) -> list[tuple[int, ...]]:
    """Shapes of `rank` positive integers whose product is `n`.

    Args:
        limit: at most this many (the first ones), or None for all; their
            number grows fast with the rank (`count_factorizations()`).
    """
    return list(itertools.islice(iter_factorizations(n, rank), limit))


def count_factorizations(n: int, rank: int) -> int:
    """How many shapes of `rank` positive integers multiply to `n`.

    For each prime power p^e in `n`, its e factors spread over `rank` axes
    in C(e + rank - 1, rank - 1) ways; the count is their product.
    """
    count, rest, p = 1, n, 2
    while p * p <= rest:
        e = 0
        while rest % p == 0:
            rest //= p
            e += 1
        count *= math.comb(e + rank - 1, rank - 1)
        p += 1
    if rest > 1:
        count *= rank
    return count


def describe_factorizations(n: int, rank: int) -> str:
    """ "8 devices can form 1×8, 2×4, 4×2 or 8×1."

    Bounded: at most MAX_LISTED_SHAPES shapes are made, and shapes of more
    than MAX_LISTED_RANK axes are counted, not listed.
    """
    devices = noun(n, "device")
    count = count_factorizations(n, rank)
    if rank > MAX_LISTED_RANK:
        what = "too many to list" if count > MAX_LISTED_SHAPES else \
            "too long to list"
        return (f"{n} {devices} can form {count:,} "
                f"{noun(count, 'shape')} of rank {rank}: {what}.")
    shapes = [format_shape(s)
              for s in factorizations(n, rank, MAX_LISTED_SHAPES)]
    more = count - len(shapes)
    if more > 0:
        shapes.append(f"{more:,} more")
    listed = shapes[0] if len(shapes) == 1 else \
        ", ".join(shapes[:-1]) + " or " + shapes[-1]
    return f"{n} {devices} can form {listed}."


def _size(value: Any, position: int) -> int | None:
    """One mesh dimension: a positive whole number, or None to infer."""
    if value is None or (isinstance(value, Real) and not isinstance(value, bool)
                         and value == -1):
        return None
    if not is_whole(value, 1):
        raise KerasmeshError(
            kinds.MESH_SHAPE,
            "`shape` must hold positive whole numbers (NA or -1 to infer "
            "one size).",
            [received(value, f"Dimension {position} is {VALUE}.")])
    return int(value)


def resolve_devices(devices: Any) -> list[str]:
    """Device names for a mesh from None, a count, or a list of names.

    Raises:
        KerasmeshError: unknown, repeated or mixed-type devices, or a bad
            count.
    """
    if devices is None:
        return list_devices()
    if isinstance(devices, Real) and not isinstance(devices, bool):
        available = list_devices()
        if not (float(devices).is_integer() and
                1 <= devices <= len(available)):
            raise KerasmeshError(
                kinds.DEVICES,
                "`devices` as a count must be a whole number from 1 to the "
                "number of devices.",
                [received(devices, f"Received {VALUE}; {len(available)} "
                                   "devices are available.")])
        return available[: int(devices)]
    if isinstance(devices, str):
        devices = [devices]
    if not isinstance(devices, (list, tuple)) or not devices or \
            not all(isinstance(d, str) for d in devices):
        raise KerasmeshError(
            kinds.DEVICES,
            "`devices` must be device names or a single count.",
            received=devices)
    names = [d.lower() for d in devices]
    types = sorted({device_type_of(d) for d in names})
    if len(types) > 1:
        raise KerasmeshError(
            kinds.DEVICES, "`devices` must all be of one type.",
            x=f"Received types {', '.join(types)}.")
    try:
        available = list_devices(types[0])
    except KerasmeshError:
        available = []
    unknown = [d for d in names if d not in available]
    if unknown:
        shown = ", ".join(available[:8]) + (", ..." if len(available) > 8
                                             else "")
        raise KerasmeshError(
            kinds.DEVICES, "`devices` must name existing devices.",
            x=f"Unknown {noun(len(unknown), 'device')}: "
              f"{', '.join(unknown)}.",
            i=f"Available: {shown or 'none of that type'}.")
    repeated = sorted({d for d in names if names.count(d) > 1},
                      key=names.index)
    if repeated:
        raise KerasmeshError(
            kinds.DEVICES, "`devices` must not repeat a device.",
            x=f"Repeated: {', '.join(repeated)}.")
    return names


def check_axis_names(axis_names: Any, rank: int) -> list[str]:
    """Non-empty, unique strings, one per mesh dimension."""
    if axis_names is None:
        raise KerasmeshError(
            kinds.AXIS_NAMES, "`axis_names` must be given when `shape` has no "
            "names.", i='Name the sizes, as in c(data = 2, model = 4), '
                        'or pass `axis_names`.')
    if isinstance(axis_names, str):
        axis_names = [axis_names]
    if not isinstance(axis_names, (list, tuple)) or len(axis_names) != rank:
        got = len(axis_names) if isinstance(axis_names, (list, tuple)) else 1
        raise KerasmeshError(
            kinds.AXIS_NAMES,
            f"`axis_names` must have one name per dimension of `shape` "
            f"({rank}).",
            x=f"Received {plural(got, 'name')}.")
    bad = [i + 1 for i, a in enumerate(axis_names)
           if not isinstance(a, str) or a == ""]
    if bad:
        value = axis_names[bad[0] - 1]
        raise KerasmeshError(
            kinds.AXIS_NAMES, "`axis_names` must be non-empty strings.",
            [("x", f"Name {bad[0]} is NA.") if value is None
             else ("x", f"Name {bad[0]} is empty.") if value == ""
             else received(value, f"Name {bad[0]} is {VALUE}.")])
    unreadable = [a for a in axis_names if not _xla_readable(a)]
    if unreadable:
        raise KerasmeshError(
            kinds.AXIS_NAMES, "`axis_names` must be printable ASCII "
            "without a backslash.",
            x=f"Received {unreadable[0]!r}.",
            i="XLA writes the names into the program it compiles and "
              "crashes reading a backslash or a character outside ASCII; "
              'name axes such as "data" and "model".')
    repeated = sorted({a for a in axis_names if axis_names.count(a) > 1})
    if repeated:
        raise KerasmeshError(
            kinds.AXIS_NAMES, "`axis_names` must be unique.",
            x=f"Repeated: {', '.join(repeated)}.")
    return list(axis_names)


def _xla_readable(name: str) -> bool:
    """Whether XLA reads `name` back as written: printable ASCII without a
    backslash (JAX 0.10's compile of a mesh axis named "c\\d" segfaults,
    one named "\u00e4" aborts)."""
    return all(" " <= ch <= "~" and ch != "\\" for ch in name)


def resolve_shape(shape: Any, n_devices: int, device_type: str
                  ) -> list[int]:
    """Check sizes, infer at most one unknown, match the device count."""
    if isinstance(shape, (Real, type(None))) and not isinstance(shape, bool):
        shape = [shape]
    if not isinstance(shape, (list, tuple)) or not shape:
        raise KerasmeshError(
            kinds.MESH_SHAPE, "`shape` must be a non-empty vector of sizes.",
            received=shape)
    sizes = [_size(s, i + 1) for i, s in enumerate(shape)]
    unknown = [i for i, s in enumerate(sizes) if s is None]
    rank = len(sizes)
    if len(unknown) > 1:
        raise KerasmeshError(
            kinds.MESH_SHAPE, "`shape` can't infer more than one size.",
            x=f"Dimensions {', '.join(str(i + 1) for i in unknown)} "
              "are NA or -1.",
            i=describe_factorizations(n_devices, rank))
    known = math.prod(s for s in sizes if s is not None)
    if unknown:
        if n_devices % known:
            raise KerasmeshError(
                kinds.MESH_SHAPE,
                "`shape` must divide the number of devices to infer a size.",
                x=f"The known sizes multiply to {known}, which does not "
                  f"divide {n_devices} {device_type} devices.",
                i=describe_factorizations(n_devices, rank))
        sizes[unknown[0]] = n_devices // known
    elif known != n_devices:
        raise KerasmeshError(
            kinds.MESH_SHAPE,
            "`shape` must multiply to the number of devices.",
            x=f"Shape {format_shape(sizes)} needs {plural(known, 'device')}; "
              f"the mesh has {n_devices} {device_type} "
              f"{noun(n_devices, 'device')}.",
            i=describe_factorizations(n_devices, rank))
    return sizes


def device_mesh(shape: Any, axis_names: Any = None,
                devices: Any = None) -> dict:
    """Build a validated `keras.distribution.DeviceMesh`.

    Args:
        shape: sizes per axis; None or -1 marks one size to infer.
        axis_names: one unique non-empty name per axis.
        devices: None (all devices of the default type), a count n (the
            first n devices), or a list of device names.

    Returns:
        `describe_mesh()` of the new mesh.

    Raises:
        KerasmeshError: kinds `mesh_shape`, `axis_names`, `devices`.
    """
    require_backend(("jax",), "A device mesh")
    import keras

    names = resolve_devices(devices)
    rank = len(shape) if isinstance(shape, (list, tuple)) else 1
    if isinstance(shape, (list, tuple)) and shape:
        check_axis_names(axis_names, rank)
    sizes = resolve_shape(shape, len(names), device_type_of(names[0]))
    axis_names = check_axis_names(axis_names, len(sizes))
    mesh = keras.distribution.DeviceMesh(
        shape=tuple(sizes), axis_names=axis_names, devices=names)
    return describe_mesh(mesh)


def device_name(device: Any) -> str:
    """Keras's name for a device given as a name or a JAX device."""
    if hasattr(device, "platform") and hasattr(device, "id"):
        return f"{device.platform}:{device.id}"
    return str(device)


def describe_mesh(mesh: Any, strict: bool = True) -> dict | None:
    """Plain description of a Keras DeviceMesh, with the mesh itself.

    Args:
        mesh: a Keras `DeviceMesh`; with `strict=False`, any object.
        strict: whether anything else is an error. R's `as_device_mesh()`
            passes False, so that one call both checks and describes, and
            words the error for its own argument.

    Returns:
        The description, or None for an object that is not a DeviceMesh
        when `strict` is False.

    Raises:
        KerasmeshError: kind `device_mesh` for an object that is not a
            DeviceMesh when `strict` is True.
    """
    from keras.distribution import DeviceMesh

    if not isinstance(mesh, DeviceMesh):
        if not strict:
            return None
        raise KerasmeshError(
            kinds.DEVICE_MESH, "Expected a Keras `DeviceMesh`.",
            received=mesh)
    devices = [device_name(d) for d in mesh.devices.flatten().tolist()]
    return {
        "mesh": mesh,
        "shape": [int(s) for s in mesh.shape],
        "axis_names": [str(a) for a in mesh.axis_names],
        "devices": devices,
        "device_type": device_type_of(devices[0]),
    }


def _mesh_text(desc: dict) -> str:
    names = ", ".join(quoted(desc["axis_names"]))
    return f"{format_shape(desc['shape'])} ({names})"


def check_same_mesh(mesh: Any, other: Any, arg: str) -> None:
    """Raise unless `other` (a DeviceMesh) is `mesh`: the same shape,
    axis names and devices in the same order.

    Raises:
        KerasmeshError: kind `mesh_mismatch`, naming `arg` and both meshes.
    """
    want, got = describe_mesh(mesh), describe_mesh(other)
    keys = ("shape", "axis_names", "devices")
    if all(want[k] == got[k] for k in keys):
        return
    same = all(want[k] == got[k] for k in keys[:2])
    raise KerasmeshError(
        kinds.MESH_MISMATCH, f"`{arg}` must be on `mesh`.",
        x=f"`{arg}` is on a mesh of {_mesh_text(got)}"
          + (" with other devices or in another order" if same else "")
          + f"; `mesh` is {_mesh_text(want)}.",
        i=f"Make `{arg}` with `mesh`, such as layout_map(mesh, ...).")


def check_batch_dim_name(name: Any, axis_names: Sequence[str]) -> str:
    """`name` if it is one of the mesh's axes.

    Raises:
        KerasmeshError: kind `batch_dim_name`.
    """
    if not isinstance(name, str) or name not in axis_names:
        raise KerasmeshError(
            kinds.BATCH_DIM_NAME,
            "`batch_dim_name` must be an axis of the mesh.", received=name,
            i=f"The mesh's axes are {', '.join(quoted(axis_names))}.")
    return name
