"""Arrays across the R/Python border as flat lists.

reticulate before 1.38 cannot convert NumPy 2 arrays in either direction,
so values cross as flat lists of numbers plus a shape.
"""

from __future__ import annotations

from typing import Any, Sequence

from .errors import KerasmeshError, describe_value


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
            "dtype", "`dtype` must name a data type.",
            [("x", f"Received {describe_value(dtype)}."),
             ("i", 'For example "float32" or "bfloat16".')]) from e


def as_array(values: Sequence[float], shape: Sequence[int],
             dtype: str = "float32", order: str = "F") -> Any:
    """A NumPy array from flat values (R's column-major order by default).

    Raises:
        KerasmeshError: kind `array` when values and shape disagree or the
            dtype is unknown.
    """
    import numpy as np

    if isinstance(values, (int, float, bool)):
        values = [values]
    if isinstance(shape, (int, float)):
        shape = [shape]
    shape = [int(s) for s in shape]
    try:
        dtype = np.dtype(dtype)
    except TypeError as e:
        raise KerasmeshError(
            "array", "`dtype` must be a NumPy dtype name.",
            [("x", f"Received {describe_value(dtype)}.")]) from e
    flat = np.asarray(values, dtype=dtype)
    expected = 1
    for s in shape:
        expected *= s
    if flat.size != expected:
        raise KerasmeshError(
            "array", "The values must fill the shape.",
            [("x", f"{flat.size} values for shape {tuple(shape)} "
                   f"({expected} values).")])
    # C order, whatever order the values came in: Keras slices batches
    # along the first axis, which is slow on a Fortran-ordered array.
    return np.ascontiguousarray(flat.reshape(shape, order=order))


def as_lists(array: Any) -> dict:
    """Shape, dtype and row-major flat values of an array-like."""
    import numpy as np

    a = np.asarray(array)
    return {"shape": [int(s) for s in a.shape], "dtype": str(a.dtype),
            "values": [float(x) for x in a.ravel(order="C")]}


def host_value(array: Any) -> Any:
    """A NumPy copy of a (possibly global) array in this process.

    A global array whose shards lie in several processes can't be fetched
    with `np.asarray()`. When this process holds a copy of every part (a
    variable split only across its own devices and replicated across
    processes), the copy is assembled from its shards; otherwise the parts
    are gathered from all processes, which every process must then do too.
    """
    import numpy as np

    if getattr(array, "is_fully_addressable", True):
        return np.asarray(array)
    out = np.empty(array.shape, dtype=array.dtype)
    filled = np.zeros(array.shape, dtype=bool)
    for shard in array.addressable_shards:
        out[shard.index] = np.asarray(shard.data)
        filled[shard.index] = True
    if filled.all():
        return out
    from jax.experimental import multihost_utils

    return np.asarray(multihost_utils.process_allgather(array, tiled=True))


def variable_values(model: Any) -> dict:
    """Paths, shapes and row-major values of a model's variables, also in
    a process of a distributed run (see `host_value()`)."""
    out = {"paths": [], "shapes": [], "values": []}
    for v in model.variables:
        arrays = as_lists(host_value(v.value))
        out["paths"].append(v.path)
        out["shapes"].append(arrays["shape"])
        out["values"].append(arrays["values"])
    return out


def copy_variable_values(source: Any, target: Any) -> int:
    """Assign `source`'s variable values to `target`'s, by position.

    Raises:
        KerasmeshError: kind `variables` when the models' variables differ.
    """
    src, dst = list(source.variables), list(target.variables)
    shapes = ([tuple(v.shape) for v in src], [tuple(v.shape) for v in dst])
    if shapes[0] != shapes[1]:
        raise KerasmeshError(
            "variables", "The two models must have variables of the same "
            "shapes.", [("x", f"{len(src)} and {len(dst)} variables.")])
    for s, d in zip(src, dst):
        d.assign(s.numpy())
    return len(dst)
