"""Every condition kind a user can catch: the one registry.

R signals `kerasmesh_error_<kind>` / `kerasmesh_warning_<kind>` (plus
`kerasmesh_error` / `kerasmesh_warning`). Each kind is declared once, below,
with what it means as an error, as a warning, or both (a plan problem's
kind can be either). The texts are the R help page's: `?kerasmesh_conditions`
and R's copy of the names (`R/kinds.R`) are generated from this module by
`tools/kinds.py`, for the R code that raises kinds without Python.

Raise sites name a kind by its constant (`kinds.MESH_SHAPE`), never by a
string: a typo is an AttributeError where it is written, and
`KerasmeshError`, `KerasmeshWarning` and plan problems check the kind they
are given (`check()`), so an unknown one fails where it is raised.

This module imports nothing from kerasmesh, so the generator reads it
without Keras.
"""

from __future__ import annotations

from dataclasses import dataclass

ERROR = "error"
WARNING = "warning"
SEVERITIES = (ERROR, WARNING)


@dataclass(frozen=True)
class Kind:
    """One kind: its name, and its meaning as an error and as a warning
    (None where it is not one)."""

    name: str
    error: str | None = None
    warning: str | None = None


class UnknownKind(LookupError):
    """A condition raised with a kind the registry lacks: a bug in
    kerasmesh, not a user's error."""


_REGISTRY: dict[str, Kind] = {}


def _kind(name: str, error: str | None = None,
          warning: str | None = None) -> str:
    """Register a kind; returns its name, for the module constant."""
    if name in _REGISTRY or not (error or warning):
        raise ValueError(f"kind {name!r} declared twice or with no text")
    _REGISTRY[name] = Kind(name, error, warning)
    return name


def check(kind: str, severity: str = ERROR) -> str:
    """`kind`, if it is a registered kind of `severity`.

    Raises:
        UnknownKind: for anything else (a typo, a kind that is only a
            warning raised as an error, a non-string).
    """
    entry = _REGISTRY.get(kind) if isinstance(kind, str) else None
    if entry is None or getattr(entry, severity, None) is None:
        raise UnknownKind(
            f"{kind!r} is not a registered {severity} kind: declare it in "
            "kerasmesh/core/kinds.py")
    return kind


def registry() -> dict[str, Kind]:
    """Every kind by name, in the order declared (by name)."""
    return dict(_REGISTRY)


def kinds() -> dict[str, dict[str, str]]:
    """Every kind a user can catch, with what it means, as plain values.

    Returns:
        `{"errors": {kind: text}, "warnings": {kind: text}}`.
    """
    return {f"{s}s": {k.name: getattr(k, s) for k in _REGISTRY.values()
                      if getattr(k, s) is not None} for s in SEVERITIES}


# -- the kinds, by name ----------------------------------------------------

ACCUMULATION_STEPS = _kind(
    "accumulation_steps",
    error="`accumulation_steps` is not a positive whole number, does not "
          "divide the batch size, or leaves a micro-batch the batch axis "
          "can't split.")
ARGUMENT = _kind(
    "argument",
    error="An argument has the wrong R type or value (checked before "
          "Python is asked).")
ARRAY = _kind(
    "array",
    error="Values and a shape (or a dtype) don't make an array.")
ARRAY_CONVERSION = _kind(
    "array_conversion",
    error="reticulate can't convert an R array to NumPy or back (before "
          "reticulate 1.38, with NumPy 2): use [numpy_array()] and "
          "[r_array()].")
ARRAY_NA = _kind(
    "array_na",
    error="`NA` in values for an integer or logical dtype.")
ARRAY_PRECISION = _kind(
    "array_precision",
    warning="Values lose precision in the dtype.")
ARRAY_RANGE = _kind(
    "array_range",
    error="Values outside the range of the dtype.")
AXIS_NAMES = _kind(
    "axis_names",
    error="Mesh axis names are missing, empty or repeated.")
BACKEND = _kind(
    "backend",
    error="Keras runs, or would start, on a backend other than JAX "
          "(fields `backend` and `keras_started`).")
BATCH_DIM_NAME = _kind(
    "batch_dim_name",
    error="The batch axis is not an axis of the mesh.")
BATCH_SIZE = _kind(
    "batch_size",
    error="The batch size can't be split over the batch axis.")
BLOCK_OUTPUTS = _kind(
    "block_outputs",
    warning="Weights are split over the batch axis and over another axis, "
            "and no rule lays the blocks' outputs out: XLA can split "
            "activations over the batch axis on another dimension and "
            "all-reduce them in every block (a rule for the blocks' outputs "
            "keeps them split by the batch).")
CHECKPOINT_DIRECTORY = _kind(
    "checkpoint_directory",
    error="The checkpoint directory is missing (or was removed or moved "
          "during a save), not a checkpoint, a file, or can't be created.")
CHECKPOINT_DTYPE = _kind(
    "checkpoint_dtype",
    error="A variable's dtype differs from the saved one.")
CHECKPOINT_EXISTS = _kind(
    "checkpoint_exists",
    error="The checkpoint step already exists, or its folder is not one "
          "kerasmesh saved.")
CHECKPOINT_FALLBACK = _kind(
    "checkpoint_fallback",
    warning="Newer checkpoint steps are incomplete or damaged; an older "
            "one is restored.")
CHECKPOINT_INCOMPLETE = _kind(
    "checkpoint_incomplete",
    error="No complete step in the checkpoint directory, or the step "
          "asked for is incomplete or damaged.")
CHECKPOINT_LAYOUT = _kind(
    "checkpoint_layout",
    error="A saved variable can't be placed with the requested layout.")
CHECKPOINT_LOCK = _kind(
    "checkpoint_lock",
    error="Another writer held the checkpoint directory's lock for the "
          "whole `timeout` (the message names the lock file and who may "
          "hold it).")
CHECKPOINT_MODEL = _kind(
    "checkpoint_model",
    error="The model to save or restore is not built.")
CHECKPOINT_ORBAX = _kind(
    "checkpoint_orbax",
    error="The Python package Orbax is missing.")
CHECKPOINT_SHAPE = _kind(
    "checkpoint_shape",
    error="A variable's shape differs from the saved one.")
CHECKPOINT_STALE = _kind(
    "checkpoint_stale",
    error="The checkpoint directory holds steps newer than the one saved "
          "(left by a run that went further than the one resumed); "
          "`overwrite = TRUE` saves it and deletes them.")
CHECKPOINT_STEP = _kind(
    "checkpoint_step",
    error="The requested step is not in the checkpoint.")
CHECKPOINT_VARIABLES = _kind(
    "checkpoint_variables",
    error="The model's variables differ from the saved ones.")
CHECKPOINT_WRITE = _kind(
    "checkpoint_write",
    error="The file system refused to write a checkpoint step (disk "
          "full, permissions).")
COMPILE = _kind(
    "compile",
    error="XLA can't compile the training step for a layout.")
DEPRECATED = _kind(
    "deprecated",
    error="A renamed argument is given under both its new and its old "
          "name.",
    warning="A renamed argument or function is used by its old name, "
            "which works for one more release (the warning names the new "
            "one).")
DEVICE_MESH = _kind(
    "device_mesh",
    error="A value is not a device mesh.")
DEVICE_TYPE = _kind(
    "device_type",
    error="An unknown device type.")
DEVICES = _kind(
    "devices",
    error="Devices given as a count or names don't fit the devices there "
          "are.")
DEVICES_STARTED = _kind(
    "devices_started",
    error="Simulated devices asked for after JAX started.")
DISTRIBUTED_ARGUMENT = _kind(
    "distributed_argument",
    error="A multi-process setting (address, process count or id) is "
          "invalid.")
DISTRIBUTED_CONNECT = _kind(
    "distributed_connect",
    error="The processes can't connect.")
DISTRIBUTED_STARTED = _kind(
    "distributed_started",
    error="Multi-process JAX asked for after JAX started.")
DISTRIBUTED_TIMEOUT = _kind(
    "distributed_timeout",
    error="Not every process checked in in time.")
DISTRIBUTION = _kind(
    "distribution",
    error="A value is not a distribution.")
DISTRIBUTION_ARGUMENT = _kind(
    "distribution_argument",
    error="Arguments of a distribution contradict each other.")
DTYPE = _kind(
    "dtype",
    error="An unknown data type name.")
GPU_COMPILER = _kind(
    "gpu_compiler",
    error="XLA's GPU compiler (JAX's CUDA plugin) is installed at another "
          "version than jaxlib, which JAX refuses to load.")
INPUT_SHAPES = _kind(
    "input_shapes",
    error="The model can't run on inputs of the given shapes.")
INSTALL_DOWNLOAD = _kind(
    "install_download",
    error="[install_kerasmesh()] can't download or install the Python "
          "packages (no network, say).")
INSTALL_ENVNAME = _kind(
    "install_envname",
    error="[install_kerasmesh()]'s environment is a file or a directory "
          "that is not a virtualenv.")
INSTALL_PYTHON = _kind(
    "install_python",
    error="The Python for [install_kerasmesh()] is missing, older than "
          "3.11, has no shared libpython or can't create virtualenvs.")
LAUNCH = _kind(
    "launch",
    error="Local workers can't be launched.")
LAUNCH_WORKER = _kind(
    "launch_worker",
    error="A launched worker failed.")
LAYOUT_AMBIGUOUS = _kind(
    "layout_ambiguous",
    error="Several layout rules match one variable.")
LAYOUT_AXES = _kind(
    "layout_axes",
    error="A layout names axes the mesh lacks or repeats one, or is not "
          "a layout.")
LAYOUT_CHECK = _kind(
    "layout_check",
    warning="The training guard could not check a model's layout before "
            "training; the message says why.")
LAYOUT_DIVISIBILITY = _kind(
    "layout_divisibility",
    error="A dimension can't be split evenly over its axes.")
LAYOUT_KEY = _kind(
    "layout_key",
    error="A layout map key is not a valid name or pattern.")
LAYOUT_KEY_EXISTS = _kind(
    "layout_key_exists",
    error="A layout map already has the key.")
LAYOUT_KEY_MISSING = _kind(
    "layout_key_missing",
    error="A layout map has no rule with the key to remove.")
LAYOUT_MAP = _kind(
    "layout_map",
    error="A value is not a layout map.")
LAYOUT_PLAN = _kind(
    "layout_plan",
    error="A layout plan has errors (also carries each problem's own "
          "class).",
    warning="A layout plan has warnings (also carries each problem's own "
            "class).")
LAYOUT_RANK = _kind(
    "layout_rank",
    error="A layout is longer than the variable's rank.",
    warning="A layout is shorter than the variable's rank.")
LOSS = _kind(
    "loss",
    error="The loss is not a Keras loss, or does not fit the model's "
          "outputs.")
MESH_MISMATCH = _kind(
    "mesh_mismatch",
    error="A layout map or distribution is on another device mesh than "
          "the one it is used with.")
MESH_RANK = _kind(
    "mesh_rank",
    warning="A data-parallel mesh has more than one axis; its first is "
            "used.")
MESH_SHAPE = _kind(
    "mesh_shape",
    error="A mesh shape does not fit the device count.")
MODEL = _kind(
    "model",
    error="A value is not a (built) Keras model.")
MODEL_PLACEMENT = _kind(
    "model_placement",
    error="A model built (or compiled) before its distribution is "
          "trained, evaluated or used to predict under it.")
NO_KERAS = _kind(
    "no_keras",
    error="Python, Keras or JAX can't be found.")
OPTIMIZER = _kind(
    "optimizer",
    error="A value is not a Keras optimizer or the name of one.")
PYTHON = _kind(
    "python",
    error="Any other Python error.")
QUANTIZE_PLACEMENT = _kind(
    "quantize_placement",
    warning="A model laid out over several devices is quantized outside "
            "its distribution: the quantized weights are made on one "
            "device.")
REMAT = _kind(
    "remat",
    error="An unknown rematerialization choice (`remat`).")
REMAT_BLOCKS = _kind(
    "remat_blocks",
    error="Rematerialization asked of a model without blocks, or of "
          "layers the model does not have.")
REPLICATED = _kind(
    "replicated",
    warning="A large variable matches no rule and stays replicated.")
ROWS_DROPPED = _kind(
    "rows_dropped",
    warning="Rows of the last batch that don't split evenly over the "
            "processes are not fed.")
SEARCH_UNSTABLE_PATHS = _kind(
    "search_unstable_paths",
    warning="The model's builder gives its variables other paths each time "
            "it runs (Keras numbers unnamed layers), so [search_layout()]'s "
            "rules won't match the next build.")
SEARCH_BUILDER = _kind(
    "search_builder",
    error="[search_layout()]'s builder builds variables of other shapes "
          "each time it runs, or, with `blocks`, variables whose shapes "
          "change with the number of blocks.")
SEARCH_EXTRAPOLATION = _kind(
    "search_extrapolation",
    warning="[search_layout()]'s figures extrapolated from 1 and 2 blocks "
            "differ from the full model's compile by more than 5 percent "
            "(per-block cost is not linear).")
SEARCH_NO_FIT = _kind(
    "search_no_fit",
    error="No configuration [search_layout()] costed fits the memory budget "
          "(the message gives the smallest memory reached and the mesh, "
          "levers and rules that reached it).")
SEARCH_FIXED = _kind(
    "search_fixed",
    error="Rules pinned with [search_layout()]'s `fixed` can't place a "
          "variable or pin only some blocks of a class.")
SHAPE = _kind(
    "shape",
    error="A shape is not a vector of whole numbers.")
TIMEOUT = _kind(
    "timeout",
    error="A call took longer than its `timeout` (costing a training "
          "step, waiting for a checkpoint save or read).")
TOPOLOGY = _kind(
    "topology",
    error="A device topology is not one: an unknown preset, a figure that "
          "can't be (zero or negative memory, bandwidth or FLOP/s, an "
          "efficiency outside (0, 1], a part of a node), or no peak FLOP/s "
          "for the model's compute dtype.")
TOPOLOGY_DEVICES = _kind(
    "topology_devices",
    error="A device topology has another number of devices than the mesh.")
UNMATCHED_OUTPUT_RULE = _kind(
    "unmatched_output_rule",
    warning="A rule matches no variable and no layer output.")
UNMATCHED_RULE = _kind(
    "unmatched_rule",
    warning="A layout rule is never used.")
VARIABLE_PATH = _kind(
    "variable_path",
    error="A variable path is not in the model.")
