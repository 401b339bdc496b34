#' Conditions kerasmesh signals
#'
#' Every error kerasmesh signals has class `kerasmesh_error` and every
#' warning `kerasmesh_warning`, plus one class naming the problem,
#' `kerasmesh_error_<kind>` or `kerasmesh_warning_<kind>`. Catch the one you
#' can handle, for example with
#' `tryCatch(code, kerasmesh_error_mesh_shape = function(e) ...)`.
#' Errors that come from Python keep the Python type, message and traceback
#' in the fields `python_type`, `python_message` and `python_traceback`.
#'
#' @section Errors:
#' \describe{
#' \item{`kerasmesh_error`}{Every kerasmesh error.}
#' \item{`kerasmesh_error_argument`}{An argument has the wrong R type or
#'   value (checked before Python is asked).}
#' \item{`kerasmesh_error_array`}{Values and a shape (or a dtype) don't make
#'   an array.}
#' \item{`kerasmesh_error_array_na`}{`NA` in values for an integer or
#'   logical dtype.}
#' \item{`kerasmesh_error_array_range`}{Values outside the range of the
#'   dtype.}
#' \item{`kerasmesh_error_axis_names`}{Mesh axis names are missing, empty or
#'   repeated.}
#' \item{`kerasmesh_error_backend`}{Keras runs, or would start, on a backend
#'   other than JAX (fields `backend` and `keras_started`).}
#' \item{`kerasmesh_error_batch_dim_name`}{The batch axis is not an axis of
#'   the mesh.}
#' \item{`kerasmesh_error_batch_size`}{The batch size can't be split over the
#'   batch axis.}
#' \item{`kerasmesh_error_checkpoint_directory`}{The checkpoint directory is
#'   missing, not a checkpoint, a file, or can't be created.}
#' \item{`kerasmesh_error_checkpoint_dtype`}{A variable's dtype differs from
#'   the saved one.}
#' \item{`kerasmesh_error_checkpoint_exists`}{The checkpoint step already
#'   exists, or its folder is not one kerasmesh saved.}
#' \item{`kerasmesh_error_checkpoint_incomplete`}{No complete step in the
#'   checkpoint directory, or the step asked for is incomplete or damaged.}
#' \item{`kerasmesh_error_checkpoint_layout`}{A saved variable can't be
#'   placed with the requested layout.}
#' \item{`kerasmesh_error_checkpoint_model`}{The model to save or restore is
#'   not built.}
#' \item{`kerasmesh_error_checkpoint_orbax`}{The Python package Orbax is
#'   missing.}
#' \item{`kerasmesh_error_checkpoint_shape`}{A variable's shape differs from
#'   the saved one.}
#' \item{`kerasmesh_error_checkpoint_step`}{The requested step is not in the
#'   checkpoint.}
#' \item{`kerasmesh_error_checkpoint_variables`}{The model's variables differ
#'   from the saved ones.}
#' \item{`kerasmesh_error_checkpoint_write`}{The file system refused to
#'   write a checkpoint step (disk full, permissions).}
#' \item{`kerasmesh_error_compile`}{XLA can't compile the training step for
#'   a layout.}
#' \item{`kerasmesh_error_device_mesh`}{A value is not a device mesh.}
#' \item{`kerasmesh_error_device_type`}{An unknown device type.}
#' \item{`kerasmesh_error_devices`}{Devices given as a count or names don't
#'   fit the devices there are.}
#' \item{`kerasmesh_error_devices_started`}{Simulated devices asked for
#'   after JAX started.}
#' \item{`kerasmesh_error_distributed_argument`}{A multi-process setting
#'   (address, process count or id) is invalid.}
#' \item{`kerasmesh_error_distributed_connect`}{The processes can't
#'   connect.}
#' \item{`kerasmesh_error_distributed_started`}{Multi-process JAX asked for
#'   after JAX started.}
#' \item{`kerasmesh_error_distributed_timeout`}{Not every process checked in
#'   in time.}
#' \item{`kerasmesh_error_distribution`}{A value is not a distribution.}
#' \item{`kerasmesh_error_distribution_argument`}{Arguments of a
#'   distribution contradict each other.}
#' \item{`kerasmesh_error_dtype`}{An unknown data type name.}
#' \item{`kerasmesh_error_input_shapes`}{The model can't run on inputs of
#'   the given shapes.}
#' \item{`kerasmesh_error_install_download`}{[install_kerasmesh()] can't
#'   download or install the Python packages (no network, say).}
#' \item{`kerasmesh_error_install_envname`}{[install_kerasmesh()]'s
#'   environment is a file or a directory that is not a virtualenv.}
#' \item{`kerasmesh_error_install_python`}{The Python for
#'   [install_kerasmesh()] is missing, older than 3.11, has no shared
#'   libpython or can't create virtualenvs.}
#' \item{`kerasmesh_error_launch`}{Local workers can't be launched.}
#' \item{`kerasmesh_error_launch_worker`}{A launched worker failed.}
#' \item{`kerasmesh_error_layout_ambiguous`}{Several layout rules match one
#'   variable.}
#' \item{`kerasmesh_error_layout_axes`}{A layout names axes the mesh lacks,
#'   or is not a layout.}
#' \item{`kerasmesh_error_layout_divisibility`}{A dimension can't be split
#'   evenly over its axes.}
#' \item{`kerasmesh_error_layout_key`}{A layout map key is not a valid
#'   name or pattern.}
#' \item{`kerasmesh_error_layout_key_exists`}{A layout map already has the
#'   key.}
#' \item{`kerasmesh_error_layout_map`}{A value is not a layout map.}
#' \item{`kerasmesh_error_layout_plan`}{A layout plan has errors (also
#'   carries each problem's own class).}
#' \item{`kerasmesh_error_layout_rank`}{A layout is longer than the
#'   variable's rank.}
#' \item{`kerasmesh_error_loss`}{A loss does not fit the model's outputs.}
#' \item{`kerasmesh_error_memory_budget`}{No layout [search_layout()]
#'   costed fits the memory budget (the message gives the smallest memory
#'   reached and its rules).}
#' \item{`kerasmesh_error_mesh_shape`}{A mesh shape does not fit the device
#'   count.}
#' \item{`kerasmesh_error_model`}{A value is not a (built) Keras model.}
#' \item{`kerasmesh_error_model_placement`}{A model built before its
#'   distribution is trained, evaluated or used to predict under it.}
#' \item{`kerasmesh_error_no_keras`}{Python has no Keras.}
#' \item{`kerasmesh_error_optimizer`}{A value is not a Keras optimizer or
#'   the name of one.}
#' \item{`kerasmesh_error_python`}{Any other Python error.}
#' \item{`kerasmesh_error_search_fixed`}{Rules pinned with
#'   [search_layout()]'s `fixed` can't place a variable or pin only some
#'   blocks of a class.}
#' \item{`kerasmesh_error_shape`}{A shape is not a vector of whole
#'   numbers.}
#' \item{`kerasmesh_error_timeout`}{A step or a launch took longer than its
#'   timeout.}
#' \item{`kerasmesh_error_variable_path`}{A variable path is not in the
#'   model.}
#' }
#'
#' @section Warnings:
#' \describe{
#' \item{`kerasmesh_warning`}{Every kerasmesh warning.}
#' \item{`kerasmesh_warning_checkpoint_fallback`}{Newer checkpoint steps are
#'   incomplete or damaged; an older one is restored.}
#' \item{`kerasmesh_warning_array_precision`}{Values lose precision in the
#'   dtype.}
#' \item{`kerasmesh_warning_layout_plan`}{A layout plan has warnings (also
#'   carries each problem's own class).}
#' \item{`kerasmesh_warning_layout_rank`}{A layout is shorter than the
#'   variable's rank.}
#' \item{`kerasmesh_warning_mesh_rank`}{A data-parallel mesh has more than
#'   one axis; its first is used.}
#' \item{`kerasmesh_warning_replicated`}{A large variable matches no rule
#'   and stays replicated.}
#' \item{`kerasmesh_warning_search_extrapolation`}{[search_layout()]'s
#'   figures extrapolated from 1 and 2 blocks differ from the full model's
#'   compile by more than 5 percent (per-block cost is not linear).}
#' \item{`kerasmesh_warning_rows_dropped`}{Rows of the last batch that
#'   don't split evenly over the processes are not fed.}
#' \item{`kerasmesh_warning_unmatched_output_rule`}{A rule matches no
#'   variable and no layer output.}
#' \item{`kerasmesh_warning_unmatched_rule`}{A layout rule is never used.}
#' }
#'
#' @name kerasmesh_conditions
#' @seealso [with_kerasmesh_errors()] for Python errors from Keras methods
#'   called directly.
#' @examplesIf keras_available()
#' simulate_devices(8)
#' tryCatch(
#'   device_mesh(c(data = 3)),
#'   kerasmesh_error_mesh_shape = function(e) class(e)
#' )
NULL
