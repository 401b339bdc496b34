# The Keras backend ------------------------------------------------------
#
# One rule, whatever the order in which packages load (documented in
# ?kerasmesh): loading kerasmesh changes no environment variable. Keras
# starts on the backend `KERAS_BACKEND` names (keras3 sets "tensorflow" when
# it loads and finds it unset; keras3::use_backend() sets the one asked
# for). Only when nobody chose one (`KERAS_BACKEND` unset) and kerasmesh is
# the first to start Python or Keras does kerasmesh choose "jax", at that
# moment (simulate_devices() counts as starting Python). Once Keras has
# started its backend can't change, so every call that can start Keras or
# needs the distribution API checks it first.

# Chooses JAX when no backend is chosen and Keras has not started; returns
# what Keras runs on, or will start on: list(started =, backend =).
choose_backend <- function() {
  state <- backend_state()
  if (!state$started && !nzchar(state$backend)) {
    set_process_env(KERAS_BACKEND = "jax")
    state$backend <- "jax"
  }
  state
}

# The choices kerasmesh makes when it starts Python (JAX when no backend is
# chosen, and kerasmesh's Python), made before Python starts, for
# simulate_devices(): a script's first kerasmesh call, after which code may
# import Keras itself. A Python that can't be found is left for the call
# that needs it to report.
prepare_python <- function() {
  tryCatch(configure_python(), kerasmesh_error_no_keras = function(e) NULL)
  invisible()
}

# Signals `kerasmesh_error_backend` unless Keras runs, or will start, on
# JAX. Called by shim_call() and shim_object() before every shim call that
# can import Keras; once Keras runs on JAX the answer is kept.
check_backend <- function(call = rlang::caller_env()) {
  if (isTRUE(the$keras_on_jax)) {
    return(invisible("jax"))
  }
  state <- choose_backend()
  if (!identical(state$backend, "jax")) {
    abort_backend(state, call)
  }
  if (state$started) {
    the$keras_on_jax <- TRUE
  }
  invisible("jax")
}

# What Keras runs on, or will start on, without starting it. Before Keras
# starts, R's `KERAS_BACKEND` is the choice (keras3 sets it there); Python
# keeps its own copy of the environment once started, so a choice made in
# R after that is copied to Python, where Keras reads it.
backend_state <- function() {
  chosen <- Sys.getenv("KERAS_BACKEND")
  if (!python_started()) {
    return(list(started = FALSE, backend = chosen))
  }
  state <- shim_call("backend.backend_state")
  if (!state$started && nzchar(chosen) &&
      !identical(chosen, state$backend)) {
    set_process_env(KERAS_BACKEND = chosen)
    state$backend <- chosen
  }
  state
}

abort_backend <- function(state, call) {
  # nolint start: object_usage_linter. cli reads these.
  backend <- state$backend
  # nolint end
  now <- if (state$started) {
    c(x = "Keras is running on the {.val {backend}} backend.",
      i = "Keras's backend can't change once it has started: restart R,
           then call {.code keras3::use_backend(\"jax\")} (or set
           {.envvar KERAS_BACKEND} to {.val jax}) before Keras starts.")
  } else {
    c(x = "Keras would start on the {.val {backend}} backend:
           {.envvar KERAS_BACKEND} is {.val {backend}} (keras3 sets
           {.val tensorflow} when it loads and finds none chosen).",
      i = "Call {.code keras3::use_backend(\"jax\")}, or
           {.code Sys.setenv(KERAS_BACKEND = \"jax\")}, before Keras starts.")
  }
  kerasmesh_abort(
    c("kerasmesh needs the Keras {.val jax} backend.", now,
      i = "Keras 3's distribution API is implemented for JAX only."),
    kind = kinds$backend, backend = backend, keras_started = state$started,
    call = call
  )
}

# Shim functions that never import Keras (the modules backend, cache and
# session, and JAX's device count for simulate_devices()): calling them
# needs no backend.
backend_free_module <- function(name) {
  sub("\\..*$", "", name) %in% c("backend", "cache", "session") ||
    identical(name, "devices.local_cpu_device_count")
}
