# Checkpoint tests: killing a save at a named point, in a fresh R process.

# The folder of the test fixtures, as an absolute path for another process.
fixture_path <- function() {
  normalizePath(testthat::test_path("fixtures"))
}

# An R value of the class reticulate gives Python objects, for the tests of
# what R sends the shim (nothing runs in Python).
fake_python_object <- function() {
  structure(list(), class = "python.builtin.object")
}

# In the process that calls it: its next checkpoint save SIGKILLs the
# process at `point` (see fixtures/checkpoint_kill.py). Loads the shim
# first.
kill_save_at <- function(point, fixtures) {
  kerasmesh::list_devices()
  reticulate::py_run_string(paste0(
    "import sys\n",
    "sys.path.insert(0, ", encodeString(fixtures, quote = "'"), ")\n",
    "import checkpoint_kill\n",
    "checkpoint_kill.kill_at(", encodeString(point, quote = "'"), ")\n"
  ))
  invisible()
}

# The Python threads alive, but for the main thread and thread pools'
# workers (which outlive their tasks): one string, names sorted. Threads
# that are ending get `seconds` to end (a loaded machine schedules them
# late), waiting in Python, where they can run on every reticulate; a
# writer left waiting for minutes is still there.
live_threads <- function(seconds = 10) {
  until <- Sys.time() + seconds
  repeat {
    alive <- reticulate::py_eval(paste(
      "', '.join(sorted(t.name for t in __import__('threading').enumerate()",
      "if t is not __import__('threading').main_thread()",
      "and not t.name.startswith(('asyncio_', 'ThreadPoolExecutor'))))"
    ))
    if (!nzchar(alive) || Sys.time() > until) {
      return(alive)
    }
    reticulate::py_eval("__import__('time').sleep(0.1)")
  }
}

# Python code that makes the next checkpoint saves wait, after Orbax's
# write has started, until `_gate.set()` runs (at most `seconds`);
# `store.finish_write = _real` undoes it. Run it with
# reticulate::py_run_string(), here or in another session.
held_write_code <- function(seconds) {
  paste(
    "import sys, threading",
    "store = sys.modules['kerasmesh.checkpoint.store']",
    "_real, _gate = store.finish_write, threading.Event()",
    "def _held(response):",
    sprintf("    _gate.wait(%d)", as.integer(seconds)),
    "    _real(response)",
    "store.finish_write = _held",
    sep = "\n"
  )
}
