#' Plan a layout before Keras allocates anything
#'
#' Works out, from shapes alone, how a [layout_map()] (or a
#' [model_parallel()] distribution) would place each variable of a model
#' on the mesh: the rule that matches it, how it is split, what one device
#' holds, and what would go wrong. Keras only applies a layout map when it
#' creates variables, and fails late or silently; `layout_plan()` finds
#' these problems first:
#'
#' * a rule that matches no variable, which leaves the variables it was
#'   meant for fully replicated (with a hint when a leading `.*` or the
#'   model's name as a prefix would make it match; functional models' paths
#'   look like `dense/kernel`, Sequential ones' like
#'   `sequential/dense/kernel`);
#' * a variable matched by several rules (Keras raises when it creates it);
#' * a layout shorter than the variable's rank, which Keras pads with `NA`
#'   without a word, so `"model"` alone on a kernel splits its first
#'   dimension; and one longer than the rank, which JAX refuses;
#' * a dimension that its mesh axes can't divide evenly;
#' * a mesh axis that the mesh doesn't have (in a rule, or as the batch
#'   axis);
#' * a `batch_size` that the batch axis can't divide.
#'
#' No weights are allocated. When `model` is a function, it is called with
#' Keras variables created shape-only (inside Keras's `StatelessScope`, with
#' initialization deferred and then dropped, and with no distribution set),
#' so a model of billions of parameters plans in a second on a laptop. The
#' model returned by the function is not kept: build the real one later,
#' under the distribution.
#'
#' @param model A built Keras model, or a function of no arguments that
#'   builds and returns one (preferred: nothing is allocated).
#' @param distribution What the model is placed with: a [model_parallel()]
#'   or [data_parallel()] distribution or a [layout_map()] (taken as
#'   `model_parallel()` of it), or a Keras `ModelParallel`, `DataParallel`
#'   or `LayoutMap` from anywhere (such as a keras-hub backbone's
#'   `get_layout_map()`). With a layout map, the batch axis is the mesh's
#'   first axis, as in Keras. A data-parallel distribution replicates every
#'   variable on its mesh: its plan gives the memory of each copy and checks
#'   the batch size.
#' @param batch_size The global batch size to check against the batch axis,
#'   or `NULL`; with micro-batches, one of them (see [layout_cost()]).
#' @param optimizer An optimizer name such as `"adam"` or a Keras optimizer,
#'   whose slot variables are counted (a copy is built shape-only; yours is
#'   not touched). `NULL` counts the model's compiled optimizer if it has
#'   one, and otherwise no slots.
#' @param replicated_share A variable that no rule matches, and that holds
#'   more than this share (0 to 1) of what one device holds, is reported
#'   (warning `kerasmesh_warning_replicated`) with a rule that splits it.
#'   Defaults to the option `kerasmesh.replicated_share`, or 5%.
#' @param layout Deprecated: use `distribution`.
#' @param ... Must be empty.
#' @return A `kerasmesh_layout_plan`: a data frame with one row per model
#'   variable and columns
#'   * `path`, `shape` (list of integer vectors), `dtype`, `trainable`;
#'   * `rule`: the key of the rule that decides the layout, `NA` if none;
#'   * `axes` (list): the mesh axis each dimension is split over, `NA` when
#'     not split, after Keras's padding;
#'   * `shard_shape` (list): the shard one device holds; `copies`: how many
#'     devices hold each shard;
#'   * `bytes`: the whole variable (a 4-bit dtype counts one byte per
#'     element, as NumPy stores it); `device_bytes`: what one device holds;
#'   * `problem`: a short description of what is wrong, `NA` if nothing.
#'
#'   Variables whose layout would fail are counted as replicated. Subsets,
#'   rows bound with `rbind()` and `as.data.frame()` are plain data frames.
#'
#'   [summary()] gives a list of totals: `parameters`, `bytes` (all
#'   weights); per device, `device_weights`, `device_gradients` (trainable
#'   variables), `device_optimizer` (slots, laid out like their variables,
#'   and counters) and their sum `device_total`; the same for a fully
#'   replicated model as `replicated_weights`, `replicated_gradients`,
#'   `replicated_optimizer`, `replicated_total`; `optimizer` (its class, or
#'   `NULL`) and `slots` (per trainable variable: 2 for Adam); the batch
#'   axis `batch_dim_name`, its size `batch_ways`, `batch_size` and
#'   `device_batch`; and `unmatched`, the keys of rules that match nothing;
#'   and tables of totals per rule (`by_rule`) and of rules for layer
#'   outputs (`outputs`).
#'
#'   Problems are grouped, one per rule and kind, with the variables they
#'   hit written compactly (`decoder_block_{0..17}/attention/{key,value}/
#'   kernel`); [layout_fix()] gives the fixes found for them as code.
#'
#'   Rules for layer outputs (activations), such as
#'   `".*dense.*output" = c("batch", NA)`, which Keras's `ModelParallel`
#'   applies to each layer's output looked up as `<layer path>/output`, are
#'   listed with the layers they apply to rather than reported as matching
#'   nothing; one that matches no layer is a warning
#'   (`kerasmesh_warning_unmatched_output_rule`).
#' @seealso [check_layout()] to turn the problems into errors and warnings;
#'   [variable_sharding()] for where a built model's variables really are.
#' @export
#' @examplesIf keras_available()
#' simulate_devices(8)
#' mesh <- device_mesh(c(data = 2, model = 4))
#' lm <- layout_map(mesh, ".*dense.*kernel" = c(NA, "model"),
#'                  ".*dense.*bias" = "model")
#' library(reticulate, include.only = "import")
#' keras <- import("keras")
#' build <- function() {
#'   keras$Sequential(list(
#'     keras$Input(shape = list(16L)),
#'     keras$layers$Dense(64L, activation = "relu"),
#'     keras$layers$Dense(8L)
#'   ))
#' }
#' plan <- layout_plan(build, lm, batch_size = 32, optimizer = "adam")
#' plan
#' summary(plan)
layout_plan <- function(model, distribution, batch_size = NULL,
                        optimizer = NULL,
                        replicated_share = getOption(
                          "kerasmesh.replicated_share", 0.05),
                        layout = deprecated(), ...) {
  check_dots_none()
  check_required(except = "distribution")
  call <- rlang::current_env()
  check_supplied(c(distribution = missing(distribution) && missing(layout)))
  distribution_arg <- typed_name("distribution", "layout")
  distribution <- renamed_arg("distribution", "layout")
  source <- check_plan_distribution(
    distribution, arg = distribution_arg, call = call
  )
  if (!is.null(batch_size)) {
    batch_size <- check_whole(batch_size)
  }
  replicated_share <- check_number(
    replicated_share, "a number between 0 and 1", min = 0, max = 1
  )
  optimizer <- check_optimizer(optimizer, call = call)
  plan_of <- function(model) {
    shim_call(
      "plan.plan_layout", model = model, distribution = source$distribution,
      batch_size = batch_size, optimizer = optimizer,
      batch_dim_name = source$batch_dim_name,
      replicated_share = replicated_share, call = call
    )
  }
  new_layout_plan(with_plan_model(model, plan_of, call = call))
}

#' Check a layout before training
#'
#' Runs [layout_plan()] and turns its problems into conditions: an error
#' for anything that would crash when Keras creates the variables or splits
#' a batch, and warnings for what would silently replicate or mis-shard
#' variables. Messages name the variable and the rule.
#'
#' | Problem | Class |
#' |---|---|
#' | several rules match a variable | `kerasmesh_error_layout_ambiguous` |
#' | layout longer than the rank | `kerasmesh_error_layout_rank` |
#' | indivisible dimension | `kerasmesh_error_layout_divisibility` |
#' | axis not in the mesh | `kerasmesh_error_layout_axes` |
#' | batch size the axis can't divide | `kerasmesh_error_batch_size` |
#' | rule that matches nothing | `kerasmesh_warning_unmatched_rule` |
#' | layout shorter than the rank | `kerasmesh_warning_layout_rank` |
#' | big variable no rule matches | `kerasmesh_warning_replicated` |
#' | output rule matching no layer | `kerasmesh_warning_unmatched_output_rule` |
#'
#' One error is signalled for all the problems that would crash: its class
#' holds the class of each kind of problem found, then
#' `kerasmesh_error_layout_plan` and `kerasmesh_error`; the first problem is
#' spelled out, with a fix when [layout_fix()] has one, and the others
#' listed. Problems are grouped, one per rule and kind. Warnings come
#' first, one per kind of problem, with classes `kerasmesh_warning_<kind>`,
#' `kerasmesh_warning_layout_plan` and `kerasmesh_warning`. Both carry the
#' plan (field `plan`) and their problems (field `problems`, a data frame).
#'
#' @section Checking automatically:
#' `check_layout()` is most useful before the model exists, with a builder
#' function: a layout that can't work then fails in a second, not after
#' minutes of allocation. kerasmesh also checks on its own when a model
#' trains under a distribution set with [set_distribution()] or
#' [with_distribution()] (see "Batches" there): under [data_parallel()] and
#' [model_parallel()], `fit()`, `evaluate()` and `predict()` first check
#' every batch they will feed, so a batch size, a last batch, or a
#' validation split or validation data that the batch axis can't divide is
#' an error of class `kerasmesh_error_batch_size` before the first step.
#' Under [model_parallel()] they also plan the model against the
#' distribution's layout map, and rules that match nothing are reported
#' once per model. Turn this off with `options(kerasmesh.check_layout =
#' FALSE)`.
#'
#' @inheritParams layout_plan
#' @param model A built Keras model, a function that builds one (see
#'   [layout_plan()]), or a plan made by [layout_plan()] (then
#'   `distribution` and `...` must be left out: the plan is checked as it
#'   was made).
#' @param ... Passed to [layout_plan()]: `batch_size`, `optimizer`,
#'   `replicated_share`.
#' @param layout Deprecated: use `distribution`.
#' @return The plan, invisibly, when nothing would crash.
#' @export
#' @examplesIf keras_available()
#' simulate_devices(8)
#' mesh <- device_mesh(c(data = 2, model = 4))
#' library(reticulate, include.only = "import")
#' keras <- import("keras")
#' build <- function() {
#'   keras$Sequential(list(keras$Input(shape = list(16L)),
#'                         keras$layers$Dense(6L, name = "dense")))
#' }
#' # "dense/kernel" misses "sequential/dense/kernel": a warning.
#' lm <- layout_map(mesh, "dense/kernel" = c(NA, "model"))
#' try(check_layout(build, lm))
#' # 6 units can't be split 4 ways: an error.
#' lm <- layout_map(mesh, ".*kernel" = c(NA, "model"))
#' try(check_layout(build, lm))
#' # A plan made before can be checked too.
#' plan <- layout_plan(build, lm)
#' try(check_layout(plan))
check_layout <- function(model, distribution, ..., layout = deprecated()) {
  check_required(except = "distribution")
  if (is.data.frame(model) && !inherits(model, "kerasmesh_layout_plan")) {
    stop_input_type(model, "a Keras model, a builder or a layout plan",
                    show_value = FALSE,
                    way_out = "Subsets of a plan ({.code plan[1, ]}) are
                               plain data frames: check the whole plan.",
                    kind = kinds$model)
  }
  plan <- if (inherits(model, "kerasmesh_layout_plan")) {
    # A plan was made with its distribution and arguments: more are not
    # taken, rather than ignored.
    if (!missing(distribution) || !missing(layout)) {
      kerasmesh_abort(
        c("A plan is checked as it was made: {.arg distribution} is not
           taken with one.",
          i = "Make a new plan with {.fn layout_plan} to check another
               distribution."),
        kind = kinds$argument
      )
    }
    check_dots_none()
    check_plan_object(model, prefix = "model")
    check_unedited(model, prefix = "model")
  } else {
    check_supplied(c(distribution = missing(distribution) &&
                       missing(layout)))
    distribution_arg <- typed_name("distribution", "layout")
    distribution <- renamed_arg("distribution", "layout")
    check_plan_distribution(distribution, arg = distribution_arg)
    layout_plan(model, distribution, ...)
  }
  signal_plan_problems(plan, call = rlang::current_env())
  invisible(plan)
}

# Whether training under model_parallel() checks the layout first.
layout_checks_enabled <- function(call = rlang::caller_env()) {
  option_flag("kerasmesh.check_layout", TRUE, call = call)
}

# -- arguments --------------------------------------------------------------

# What layout_plan() places the model with: the Keras LayoutMap (or
# ModelParallel) and the batch axis, from a kerasmesh or Keras object.
check_plan_distribution <- function(x, arg = rlang::caller_arg(x),
                                    call = rlang::caller_env()) {
  if (inherits(x, "kerasmesh_object")) {
    check_unedited(x, prefix = arg, call = call)
  }
  if (inherits(x, "kerasmesh_model_parallel")) {
    return(list(
      distribution = object_py(.subset2(x, "layout_map"), arg, call),
      batch_dim_name = .subset2(x, "batch_dim_name")
    ))
  }
  if (inherits(x, "kerasmesh_data_parallel")) {
    # No rules: every variable replicated, the batch split over its axis.
    return(list(distribution = object_py(x, arg, call),
                batch_dim_name = .subset2(x, "batch_dim_name")))
  }
  if (inherits(x, "kerasmesh_layout_map")) {
    return(list(distribution = object_py(x, arg, call), batch_dim_name = NULL))
  }
  # Keras objects from any source: the shim decides what they are.
  if (inherits(x, "python.builtin.object")) {
    return(list(distribution = x, batch_dim_name = NULL))
  }
  what <- "a layout map or a distribution"
  way_out <- "Create one with {.fn layout_map}, {.fn model_parallel} or
              {.fn data_parallel}."
  if (is.object(x)) {
    # cli < 3.6.1 names every S3 class, later ones the first only.
    kerasmesh_abort(
      c(paste0("{.arg {arg}} must be ", what, "."),
        x = "Received a {.cls {class(x)[[1]]}} object.", i = way_out),
      kind = kinds$layout_map, call = call
    )
  }
  stop_input_type(x, what, show_value = FALSE, way_out = way_out,
                  kind = kinds$layout_map, arg = arg, call = call)
}

check_optimizer <- function(optimizer, call = rlang::caller_env()) {
  if (is.null(optimizer) || inherits(optimizer, "python.builtin.object")) {
    return(optimizer)
  }
  if (is.character(optimizer) && length(optimizer) == 1 &&
      !is.na(optimizer) && nzchar(optimizer)) {
    return(optimizer)
  }
  stop_input_type(
    optimizer, "an optimizer name or a Keras optimizer", show_value = FALSE,
    way_out = 'For example {.code "adam"}.', kind = kinds$optimizer,
    arg = "optimizer", call = call
  )
}
