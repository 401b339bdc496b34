#!/usr/bin/env bash
# Tests that tools/debian13.sh leaves no mount and no process behind in its
# root when the command it runs there is interrupted (SIGINT to the runner's
# process group, as Ctrl-C sends; SIGTERM to the runner) or fails.
# Exits non-zero, naming what remains, if anything does.
set -euo pipefail
cd "$(dirname "$0")/.."

if [ "$(id -u)" -ne 0 ]; then
  # Reading other processes' /proc/PID/root needs root, as the runner does.
  exec sudo ${KERASMESH_CACHE:+KERASMESH_CACHE="$KERASMESH_CACHE"} \
    bash "$PWD/tools/test-chroot-cleanup.sh"
fi

RUNNER=tools/debian13.sh
ROOT="$(bash "$RUNNER" root)"
MARK=/tmp/kerasmesh-cleanup-test-started
failures=0

say() { echo "test-chroot-cleanup: $*" >&2; }
fail() { say "FAIL: $*"; failures=$((failures + 1)); }

# shellcheck source=tools/chroot-lib.sh
. tools/chroot-lib.sh
# One line, for messages.
mounts_left() { mounts_under "$ROOT" | xargs; }
pids_left() { pids_in_root "$ROOT" | xargs; }

# The runner must be built and idle before the test starts.
[ -d "$ROOT/proc" ] || { say "no root at $ROOT: run '$RUNNER build'"; exit 1; }
[ -z "$(mounts_left)" ] ||
  { say "mounts under $ROOT before the test: $(mounts_left)"; exit 1; }

runner_pid=""
# If an assertion failed with the runner still up, stop it the way a user
# would, so that the test itself leaves nothing behind either.
stop_runner() {
  if [ -n "$runner_pid" ] && kill -0 "$runner_pid" 2>/dev/null; then
    kill -TERM -- "-$runner_pid" 2>/dev/null || true
    wait "$runner_pid" 2>/dev/null || true
  fi
  runner_pid=""
}
finish() {
  stop_runner
  rm -f "$ROOT$MARK" "$ROOT/tmp/kerasmesh-cleanup-test.py"
}
trap finish EXIT

# Job control: each background job gets its own process group, which can
# be signalled as a terminal's Ctrl-C would, and does not start with SIGINT
# ignored (as background jobs of a script without job control do).
set -m

# Starts the runner, running CMD in the root, with its output piped
# through cat in the same process group, as `make check-debian13 | tee log`
# does: Ctrl-C kills the reader too, and the runner must still clean up.
# SIGINT as a terminal's shell leaves it: where this test itself started
# with SIGINT ignored (a background job of a shell without job control),
# the runner would inherit that, and no shell can undo it.
start_runner() {
  rm -f "$ROOT$MARK"
  # shellcheck disable=SC2016 # expanded by the inner bash
  env --default-signal=INT \
    bash -c 'bash "$0" run "$1" 2>&1 | cat >&2; exit "${PIPESTATUS[0]}"' \
    "$RUNNER" "$1" </dev/null &
  runner_pid=$!
}

# Waits (bounded) for the command in the root to have started.
wait_for_mark() {
  for _ in $(seq 600); do
    [ -f "$ROOT$MARK" ] && return 0
    kill -0 "$runner_pid" 2>/dev/null || return 1
    sleep 0.1
  done
  return 1
}

# Waits (bounded) for the runner to exit; sets status to its exit status,
# or to "timeout".
wait_runner() {
  status=timeout
  for _ in $(seq 600); do
    if ! kill -0 "$runner_pid" 2>/dev/null; then
      status=0
      wait "$runner_pid" || status=$?
      runner_pid=""
      return 0
    fi
    sleep 0.1
  done
}

# What the runner's process group and the root still run, and where each
# process waits: the evidence when the runner does not exit.
show_stuck() {
  local pids
  pids="$( (pgrep -g "$runner_pid"; pids_in_root "$ROOT") | sort -u | xargs)"
  [ -z "$pids" ] ||
    ps -o pid,ppid,pgid,stat,wchan:20,etime,args -p "${pids// /,}" >&2 || true
}

assert_clean() {
  local what="$1" left
  left="$(mounts_left)"
  [ -z "$left" ] || fail "$what: still mounted: $left"
  left="$(pids_left)"
  [ -z "$left" ] || fail "$what: processes still in the root: $left"
}

# 1. Interrupted midway by SIGINT to the runner's process group, and
# 2. stopped by SIGTERM to the runner, while a shell, R and a Python child
#    of R run inside (as in `make check`); Python writes the mark.
cat >"$ROOT/tmp/kerasmesh-cleanup-test.py" <<EOF
import time
open("$MARK", "w").close()
time.sleep(300)
EOF
for signal in INT TERM; do
  start_runner "Rscript -e 'system(\"python3 /tmp/kerasmesh-cleanup-test.py\")' & sleep 300"
  if ! wait_for_mark; then
    fail "SIG$signal: the command never started in the root"
    stop_runner
    continue
  fi
  [ -n "$(mounts_left)" ] ||
    fail "SIG$signal: nothing was mounted while the command ran"
  if [ "$signal" = INT ]; then
    kill -INT -- "-$runner_pid"        # the whole group: runner, cat, ...
  else
    kill -TERM "$(pgrep -g "$runner_pid" -f "^bash $RUNNER run")"
  fi
  wait_runner
  case "$status" in
    timeout) fail "SIG$signal: the runner did not exit within 60 s"
      show_stuck
      stop_runner ;;
    0) fail "SIG$signal: the runner exited with status 0" ;;
    *) say "SIG$signal: runner exited with status $status" ;;
  esac
  assert_clean "SIG$signal"
done

# 3. A command that fails inside the root.
start_runner "touch $MARK; exit 3"
wait_runner
[ "$status" = 3 ] || fail "failing command: runner exited with $status, not 3"
say "failing command: runner exited with status $status"
assert_clean "failing command"

if [ "$failures" -gt 0 ]; then
  say "$failures failure(s): the runner leaves things behind"
  exit 1
fi
say "OK: no mount and no process left under $ROOT"
