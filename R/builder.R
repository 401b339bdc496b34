# The `model` argument of layout_plan() and layout_cost(): a Keras model, or
# an R function that builds one shape-only.

# Calls `f(model)`, where `f` makes the one shim call that needs the model.
# A Keras model goes down as it is; an R builder function goes down as a
# Python callable, and the shim calls it inside its shape-only scope (one
# call down, one back; no scope driven from R). An error the builder raises
# reaches the caller as raised, not as the Python error reticulate makes
# of it on the way back.
with_plan_model <- function(model, f, arg = rlang::caller_arg(model),
                            call = rlang::caller_env()) {
  if (inherits(model, "python.builtin.object")) {
    return(f(model))
  }
  if (!is.function(model)) {
    kerasmesh_abort(
      c("{.arg {arg}} must be a Keras model or a function that builds one.",
        x = "Received {.obj_type_friendly {model}}."),
      kind = "model", call = call
    )
  }
  failed <- NULL
  builder <- function() {
    withCallingHandlers(model(), error = function(e) failed <<- e)
  }
  withCallingHandlers(
    f(builder),
    error = function(e) if (!is.null(failed)) stop(failed)
  )
}
