"""Arrays across the R/Python border as flat lists.

reticulate before 1.38 cannot convert NumPy 2 arrays in either direction,
so values cross as flat lists of numbers plus a shape.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..core.describe import check_built
from ..core.errors import KerasmeshError, warn
from ..core.text import format_shape, noun
from ..core import kinds


class Origin:
    """Where the values of a subset of rows sit in the array the user
    gave: `arg` names it; `rows` (1-based, or None for all) are the rows
    taken from its `n_rows`. Positions are counted in that array."""

    def __init__(self, arg: str, rows: Sequence[int] | None, n_rows: int):
        self.arg = arg
        self.rows = None if rows is None else [int(r) for r in rows]
        self.n_rows = int(n_rows)

    def positions(self, flat: Any) -> Any:
        """0-based positions in the user's array of 0-based positions in
        the subset (column-major, rows first)."""
        import numpy as np

        if self.rows is None:
            return flat
        m = len(self.rows)
        return np.asarray(self.rows)[flat % m] - 1 + self.n_rows * (flat // m)


def as_array(values: Sequence[float], shape: Sequence[int],
             dtype: str = "float32", order: str = "F",
             arg: str | None = None, rows: Sequence[int] | None = None,
             n_rows: int | None = None) -> Any:
    """A NumPy array from flat values (R's column-major order by default).

    Values the dtype can't hold are refused, never changed silently (see
    `check_representable()`). `arg`: the values are rows of the user's
    array of that name (`rows` of its `n_rows`), named with their
    positions there in a refusal.

    Returns:
        A NumPy array, C-ordered: a Python object, called with
        `call_object()`.

    Raises:
        KerasmeshError: kind `array` when values and shape disagree or the
            dtype is unknown; `array_na`, `array_range` from
            `check_representable()`.
    """
    import numpy as np

    if isinstance(values, (int, float, bool)):
        values = [values]
    if isinstance(shape, (int, float)):
        shape = [shape]
    shape = [int(s) for s in shape]
    name = dtype
    try:
        dtype = _dtype(dtype)
    except TypeError as e:
        raise KerasmeshError(
            kinds.ARRAY, "`dtype` must be a NumPy dtype name.",
            received=dtype) from e
    if not _holds_real_numbers(dtype):
        raise KerasmeshError(
            kinds.ARRAY,
            "`dtype` must be a dtype of booleans, integers or floating "
            "numbers.",
            x=f'Received "{name}".',
            i='Use "float32", "bfloat16", "int32" or "bool", for example.')
    origin = None if arg is None else \
        Origin(arg, rows, n_rows if n_rows is not None else shape[0])
    check_representable(values, dtype, origin)
    flat = np.asarray(values, dtype=dtype)
    expected = 1
    for s in shape:
        expected *= s
    if flat.size != expected:
        raise KerasmeshError(
            kinds.ARRAY, "The values must fill the shape.",
            x=f"{flat.size} values for shape {format_shape(shape)} "
              f"({expected} values).")
    # C order, whatever order the values came in: Keras slices batches
    # along the first axis, which is slow on a Fortran-ordered array.
    return np.ascontiguousarray(flat.reshape(shape, order=order))


def _dtype(name: Any) -> Any:
    """The NumPy dtype of a name, also for JAX's ("bfloat16")."""
    import numpy as np

    try:
        return np.dtype(name)
    except TypeError:
        import jax.numpy as jnp

        return np.dtype(jnp.dtype(str(name)))


def _holds_real_numbers(dtype: Any) -> bool:
    """NumPy's booleans, integers and floats, and JAX's floats (bfloat16,
    float8): not dates, strings, complex numbers or 4-bit integers, whose
    ranges NumPy can't check."""
    if dtype.kind in "biuf":
        return True
    if dtype.kind != "V":
        return False
    import jax.numpy as jnp

    try:
        jnp.finfo(dtype)
    except (TypeError, ValueError):
        return False
    return True


def positions(mask: Any, first: int = 5,
              origin: Origin | None = None) -> str:
    """The 1-based positions where `mask` is true, as R users count:
    "2, 5 and 9", or "2, 5, 9, 11, 12 and 3 more"; in the user's array
    where `origin` says where the values came from."""
    import numpy as np

    flat = np.flatnonzero(mask)
    if origin is not None:
        flat = origin.positions(flat)
    where = [str(int(i) + 1) for i in flat]
    if len(where) > first:
        return ", ".join(where[:first]) + f" and {len(where) - first} more"
    if len(where) == 1:
        return where[0]
    return ", ".join(where[:-1]) + " and " + where[-1]


def check_representable(values: Sequence[float], dtype: Any,
                        origin: Origin | None = None) -> None:
    """Refuse values `dtype` can't hold; warn when it rounds whole numbers.

    NaN is a missing value: fine in a floating dtype, an error in an
    integer or boolean one. Integer dtypes take whole numbers within their
    range, booleans 0 and 1. A floating dtype must not overflow to
    infinity; whole numbers beyond its exact range (2^24 for float32) that
    it rounds give a warning.

    Raises:
        KerasmeshError: kinds `array_na`, `array_range`.
    """
    import numpy as np

    dtype = _dtype(dtype)
    raw = np.asarray(values, dtype=np.float64).ravel()
    name = f'`dtype` "{dtype}"'
    missing = np.isnan(raw)
    if dtype.kind in "iub" and missing.any():
        raise KerasmeshError(
            kinds.ARRAY_NA, f"{name} can't hold NA or NaN.",
            x=f"NA {_at(missing, origin)}.",
            i='Use a floating dtype such as "float32", where NA '
              "becomes NaN.")
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        bad = (raw != np.trunc(raw)) | (raw < float(info.min)) | \
            (raw >= float(info.max) + 1)
        _refuse(bad, raw, name, f"whole numbers from {info.min} to "
                                f"{info.max}", origin)
    elif dtype.kind == "b":
        _refuse((raw != 0) & (raw != 1), raw, name, "0, 1, TRUE and FALSE",
                origin)
    else:
        _check_float(raw, dtype, name, origin)


def _number(x: float) -> str:
    """A value as R would print it in full: 16777217, 0.5, NaN, Inf."""
    if x != x:
        return "NaN"
    if x in (float("inf"), float("-inf")):
        return "Inf" if x > 0 else "-Inf"
    if float(x).is_integer() and abs(x) < 1e16:
        return str(int(x))
    return repr(float(x))


def _at(mask: Any, origin: Origin | None = None) -> str:
    """"at positions 2 and 5", or "in `x` at position 9" of the user's
    array that `origin` names."""
    where = f"in `{origin.arg}` at" if origin is not None else "at"
    return f"{where} {noun(int(mask.sum()), 'position')} " \
        f"{positions(mask, origin=origin)}"


def _refuse(bad: Any, raw: Any, name: str, holds: str,
            origin: Origin | None = None) -> None:
    if bad.any():
        shown = list(dict.fromkeys(_number(v) for v in raw[bad]))
        values = " and ".join(shown[:2]) if len(shown) <= 2 else \
            ", ".join(shown[:3]) + (", ..." if len(shown) > 3 else "")
        raise KerasmeshError(
            kinds.ARRAY_RANGE, f"{name} holds only {holds}.",
            x=f"Can't store {values} ({_at(bad, origin)}).",
            i="Choose a dtype that holds the values, or change them "
              "first.")


def _check_float(raw: Any, dtype: Any, name: str,
                 origin: Origin | None = None) -> None:
    import numpy as np

    if dtype.kind not in "fV":
        return
    with np.errstate(over="ignore", invalid="ignore"):
        cast = raw.astype(dtype).astype(np.float64)
    finite = np.isfinite(raw)
    import jax.numpy as jnp

    biggest = float(jnp.finfo(dtype).max)
    _refuse(finite & ~np.isfinite(cast), raw, name,
            f"values from {-biggest:.4g} to {biggest:.4g}", origin)
    whole = np.zeros_like(finite)
    whole[finite] = raw[finite] == np.trunc(raw[finite])
    rounded = whole & (cast != raw)
    if rounded.any():
        i = np.flatnonzero(rounded)[0]
        warn(kinds.ARRAY_PRECISION,
             f"{name} can't hold every whole number exactly.",
             [("x", f"{_number(raw[i])} became {_number(cast[i])} "
                    f"({_at(rounded, origin)})."),
              ("i", 'Use dtype "float64" (or an integer dtype) to keep '
                    "them exact.")])


def as_lists(array: Any) -> dict:
    """Shape, dtype and row-major flat values of an array-like."""
    import numpy as np

    a = np.asarray(array)
    return {"shape": [int(s) for s in a.shape], "dtype": str(a.dtype),
            "values": [float(x) for x in a.ravel(order="C")]}


R_INTEGER_MAX = 2**31 - 1


def to_r(x: Any, arg: str = "array") -> dict:
    """An array (NumPy, JAX, a Keras tensor, a number), or a list, tuple
    or dict of them, as plain values R rebuilds with `r_array()`.

    Returns:
        {"shape", "type" ("logical", "integer" or "double"), "values" (row
        major)} for an array; {"names" (None for a list), "items"} for a
        list, tuple or dict. Integers R's integers can't hold, and
        unsigned 32-bit and wider ones, come as doubles.

    Raises:
        KerasmeshError: kind `array` for anything else (strings, complex
            numbers, objects).
    """
    import numpy as np

    if isinstance(x, dict):
        return {"names": [str(k) for k in x],
                "items": [to_r(v, f'{arg}[["{k}"]]') for k, v in x.items()]}
    if isinstance(x, (list, tuple)):
        return {"names": None,
                "items": [to_r(v, f"{arg}[[{i}]]")
                          for i, v in enumerate(x, 1)]}
    try:
        a = np.asarray(host_value(x) if hasattr(x, "addressable_shards")
                       else x)
    except Exception as e:  # noqa: BLE001 - anything NumPy can't read
        raise KerasmeshError(kinds.ARRAY, f"`{arg}` must be an array.",
                             received=x) from e
    if a.dtype == bool:
        kind = "logical"
    elif a.dtype.kind in "iu" and (a.size == 0 or (
            int(a.min()) >= -R_INTEGER_MAX and
            int(a.max()) <= R_INTEGER_MAX)):
        kind, a = "integer", a.astype(np.int64)
    elif a.dtype.kind in "iuf" or str(a.dtype) == "bfloat16":
        kind, a = "double", a.astype(np.float64)
    elif a.dtype == object and a.ndim == 0:
        raise KerasmeshError(
            kinds.ARRAY,
            f"`{arg}` must be a NumPy array, a JAX array or a Keras tensor.",
            received=x)
    else:
        raise KerasmeshError(
            kinds.ARRAY, f"`{arg}` must hold numbers or logicals.",
            x=f"Its dtype is {a.dtype}.")
    return {"shape": [int(n) for n in a.shape], "type": kind,
            "values": a.ravel(order="C").tolist()}


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
    check_built(model)
    out = {"paths": [], "shapes": [], "values": []}
    for v in model.variables:
        arrays = as_lists(host_value(v.value))
        out["paths"].append(v.path)
        out["shapes"].append(arrays["shape"])
        out["values"].append(arrays["values"])
    return out
