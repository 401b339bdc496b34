# The `model` argument of layout_plan() and layout_cost(): a Keras model, or
# an R function that builds one shape-only.

# Calls `f(model)`, where `f` makes the one shim call that needs the model.
# A Keras model goes down as it is; an R builder function goes down as a
# Python callable, and the shim calls it inside its shape-only scope (one
# call down, one back; no scope driven from R). An error the builder raises
# reaches the caller as raised, not as the Python error reticulate makes
# of it on the way back; an error Keras raised in it is
# `kerasmesh_error_model`, with Keras's as its parent.
#
# With a `deadline` (an elapsed_seconds() value), an R builder runs under
# setTimeLimit() until then, and an error it raises at or after the
# deadline (R's time limit, or the shim's stopping Python code the builder
# called) becomes a `kerasmesh_error_timeout` worded for `task`.
#
# An interrupt (Ctrl-C) in the builder, also while it waits in Python,
# stays an R interrupt: reticulate would hand it back to the shim as a
# Python RuntimeError ("Unknown exception occurred"), which the shim
# unwinds through its scopes; then the interrupt is signalled again here.
with_plan_model <- function(model, f, deadline = NULL, timeout = NULL,
                            task = "cost", blocks = FALSE,
                            arg = rlang::caller_arg(model),
                            call = rlang::caller_env()) {
  check_plan_model(model, blocks = blocks, arg = arg, call = call)
  if (inherits(model, "python.builtin.object")) {
    return(f(model))
  }
  failed <- NULL
  interrupted <- FALSE
  # `...`: a builder of one argument (search_layout()'s number of blocks).
  builder <- function(...) {
    if (!is.null(deadline)) {
      setTimeLimit(elapsed = max(deadline - elapsed_seconds(), 0.1),
                   transient = TRUE)
      on.exit(setTimeLimit(elapsed = Inf), add = TRUE)
    }
    built <- withCallingHandlers(model(...), interrupt = function(i) {
      interrupted <<- TRUE
    }, error = function(e) {
      # No time limit while the error is handled (R's own is cleared when
      # it fires; the shim's stopping Python leaves R's set).
      setTimeLimit(elapsed = Inf)
      failed <<- if (!is.null(deadline) &&
                       elapsed_seconds() >= deadline - 0.5) {
        builder_timeout(timeout, task, e, call)
      } else if (is_python_error(e)) {
        builder_python_error(e, arg, call)
      } else {
        e
      }
    })
    interrupted <<- FALSE # an interrupt the builder handled itself
    built
  }
  withCallingHandlers(
    f(builder),
    error = function(e) {
      if (interrupted) rlang::interrupt()
      if (!is.null(failed)) stop(failed)
    }
  )
}

# The timeout error of a builder stopped at the deadline, unsignalled, in
# the words of its `task` ("cost" or "search"), as the shim's own timeouts
# word them.
builder_timeout <- function(timeout, task, e, call) {
  words <- switch(
    task,
    cost = c("Costing the training step",
             "cost a smaller model or batch"),
    search = c("The search", "search with {.arg blocks} or a smaller space
               (pin rules with {.arg fixed})")
  )
  tryCatch(
    kerasmesh_abort(
      c("{words[[1]]} took longer than {timeout} s.",
        x = "The time ran out while building the model (in the builder).",
        i = paste0("Raise {.arg timeout}, or ", words[[2]], ".")),
      kind = kinds$timeout, parent = e, call = call
    ),
    error = identity
  )
}

# An error Keras raised in the builder (a layer of a bad size), classed,
# unsignalled: the builder's own R errors reach the caller as they are.
builder_python_error <- function(e, arg, call) {
  lines <- strsplit(conditionMessage(e), "\n", fixed = TRUE)[[1]]
  first <- c(lines, "")[[1]] # nolint: object_usage_linter. cli reads it.
  tryCatch(
    kerasmesh_abort(
      c("{.arg {arg}} failed to build the model: Keras raised an error.",
        x = "{first}"),
      kind = kinds$model, parent = e, call = call
    ),
    error = identity
  )
}

# A model for planning or costing, checked before Python starts: a Keras
# model, or a builder R can call as kerasmesh will, with no arguments or
# (`blocks`, search_layout()'s number of blocks) with one.
check_plan_model <- function(model, blocks = FALSE,
                             arg = rlang::caller_arg(model),
                             call = rlang::caller_env()) {
  if (!inherits(model, "python.builtin.object") && !is.function(model)) {
    stop_input_type(model, "a Keras model or a function that builds one",
                    show_value = FALSE,
                    kind = kinds$model, arg = arg, call = call)
  }
  if (inherits(model, "python.builtin.object")) {
    return(invisible(model))
  }
  formals <- formals(args(model)) %||% list()
  dots <- "..." %in% names(formals)
  formals <- formals[names(formals) != "..."]
  required <- names(formals)[vapply(formals, rlang::is_missing, TRUE)]
  if (!blocks && length(required) > 0) {
    kerasmesh_abort(
      c("{.arg {arg}} must be a function of no arguments that builds the
         model.",
        x = "Received a function whose argument{?s} {.arg {required}}
             ha{?s/ve} no default.",
        i = "Give {.arg {required}} a default, or pass
             {.code function() build(...)}."),
      kind = kinds$model, call = call
    )
  }
  if (blocks && (length(required) > 1 || (!dots && length(formals) == 0))) {
    stop_input_type(
      model, show_value = FALSE,
      problem = "With {.arg blocks}, {.arg {arg}} must be a function of one
                 argument, the number of blocks to build.",
      kind = kinds$model, arg = arg, call = call
    )
  }
  invisible(model)
}
