#!/usr/bin/env bash
# The second test stack: Debian 13 (trixie) with R 4.5, r-cran-reticulate
# 1.41 and Python 3.13, in a chroot that is built once and cached outside
# the clone.
#
#   tools/debian13.sh check      build what is missing, then `make check` on a
#                                copy of this working tree inside the root
#   tools/debian13.sh build      only build the root and fetch the wheels
#   tools/debian13.sh run CMD    run the shell command CMD inside the root,
#                                mounted and cleaned up as `check` does
#   tools/debian13.sh root       print the root's path
#   tools/debian13.sh clean      unmount and delete the cache
#
# Cache, $KERASMESH_CACHE (default ~/.cache/kerasmesh/debian13):
#   root/      the Debian 13 root; root/.kerasmesh-root-complete is written
#              last, so a root without it (an interrupted build) is rebuilt
#   wheels/K/  cp313 wheels for tools/requirements*.txt, K a hash of them;
#              the root's venv installs from them (pip inside the chroot
#              cannot reach PyPI)
#   lock       one runner at a time per cache (the root is shared)
#
# /proc, /sys (read-only), /dev and /dev/shm are mounted only while
# something runs inside the root. Every exit path (success, failure,
# Ctrl-C, SIGTERM, SIGHUP, a closed output pipe) stops what runs in the root
# and unmounts everything under it, last mount first.
set -euo pipefail
cd "$(dirname "$0")/.."

SUITE=trixie
# What the root needs before tools/setup.sh can run in it. Changing this
# list (or the suite) rebuilds the root.
BASE_PACKAGES=(python3 python3-venv libpython3-dev make ca-certificates)
ROOT_RECIPE="v1 $SUITE minbase ${BASE_PACKAGES[*]}"
# shellcheck source=tools/debian-packages.sh
. tools/debian-packages.sh

CACHE="${KERASMESH_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/kerasmesh/debian13}"
SRC_IN_ROOT=/build/kerasmesh

# Never fatal: after Ctrl-C the reader of our output (a pipe to tee) may be
# gone, and a failed write must not cut the cleanup short.
say() { printf 'debian13: %s\n' "$*" >&2 2>/dev/null || true; }
die() { say "error: $*"; exit 1; }

if [ "$(id -u)" -ne 0 ]; then
  # debootstrap, mount and chroot need root; keep the caller's cache.
  exec sudo KERASMESH_CACHE="$CACHE" ${CI:+CI="$CI"} \
    bash "$PWD/tools/debian13.sh" "$@"
fi

mkdir -p "$CACHE"
CACHE="$(cd "$CACHE" && pwd -P)"
ROOT="$CACHE/root"
STAMP="$ROOT/.kerasmesh-root-complete"

# --- mounts and processes in the root -------------------------------------

# shellcheck source=tools/chroot-lib.sh
. tools/chroot-lib.sh

# Stops the processes running in the root (only this runner starts them:
# the lock keeps other runners out), politely first.
stop_root_processes() {
  local pids=()
  mapfile -t pids < <(pids_in_root "$ROOT")
  [ "${#pids[@]}" -gt 0 ] || return 0
  say "stopping processes still running in the root: ${pids[*]}"
  kill -TERM "${pids[@]}" 2>/dev/null || true
  for _ in $(seq 50); do
    mapfile -t pids < <(pids_in_root "$ROOT")
    [ "${#pids[@]}" -gt 0 ] || return 0
    sleep 0.2
  done
  kill -KILL "${pids[@]}" 2>/dev/null || true
  sleep 0.5
}

# Idempotent: unmounts whatever is mounted under the root (ours, or
# debootstrap's after a kill), stopping what runs there first.
unmount_root() {
  local mounts path
  [ -n "$(mounts_under "$ROOT")" ] || return 0
  stop_root_processes
  for _ in 1 2 3; do
    mounts="$(mounts_under "$ROOT")"
    [ -n "$mounts" ] || return 0
    while IFS= read -r path; do
      umount "$path" 2>/dev/null || umount --lazy "$path" 2>/dev/null || true
    done <<<"$mounts"
  done
  mounts="$(mounts_under "$ROOT")"
  [ -z "$mounts" ] || { say "error: still mounted: ${mounts//$'\n'/ }"; return 1; }
}

mount_root() {
  mountpoint -q "$ROOT/proc" || mount -t proc proc "$ROOT/proc"
  # Read-only: Open MPI (mpirun in the multi-process tests) reads the CPU
  # topology and network interfaces there, and gives up without them.
  mountpoint -q "$ROOT/sys" || mount -t sysfs -o ro sysfs "$ROOT/sys"
  if ! mountpoint -q "$ROOT/dev"; then
    mount --bind /dev "$ROOT/dev"
    # Private: nothing mounted below it may reach the host's /dev.
    mount --make-private "$ROOT/dev"
  fi
  mkdir -p "$ROOT/dev/shm"
  mountpoint -q "$ROOT/dev/shm" ||
    mount -t tmpfs -o size=2g,mode=1777 tmpfs "$ROOT/dev/shm"
}

# The mirror's address stays out of files: logs name it <debian-mirror>.
MIRROR=""
scrub_logs() {
  [ -n "$MIRROR" ] || return 0
  sed -i "s|$MIRROR|<debian-mirror>|g" "$CACHE"/*.log 2>/dev/null || true
}

child=""
cleanup() {
  local status=$?
  trap - EXIT
  # A second Ctrl-C, or output to a closed pipe, must not cut it short.
  trap '' INT TERM HUP PIPE
  scrub_logs
  if [ -n "$child" ]; then
    kill -TERM "$child" 2>/dev/null || true
  fi
  unmount_root || status=1
  if [ -n "$child" ]; then wait "$child" 2>/dev/null || true; fi
  exit "$status"
}
on_signal() {
  trap '' INT TERM HUP PIPE
  say "interrupted by SIG$1; cleaning up"
  # 128 + signal number, as a shell reports a killed command.
  exit $((128 + $(kill -l "$1")))
}
# Runs "$@" in the background and waits, so that a signal reaches the traps
# at once instead of after the command ends. With RUN_LOG set, the command's
# output goes there (and this runner's own messages still to the terminal).
run_waiting() {
  local status=0
  # 9>&-: the lock stays with this runner.
  if [ -n "${RUN_LOG:-}" ]; then
    "$@" >"$RUN_LOG" 2>&1 9>&- &
  else
    "$@" 9>&- &
  fi
  child=$!
  wait "$child" || status=$?
  child=""
  return "$status"
}

# A clean environment inside the root: only what the checks need.
CHROOT_ENV=(
  HOME=/root
  PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
  LANG=C.UTF-8
  NOT_CRAN=true
  KERASMESH_REQUIRE_PYTHON=true
  KERASMESH_GPU_COMPILER=false
  KERASMESH_REQUIRE_GPU_COMPILER=false
  PIP_NO_INDEX=1
  PIP_FIND_LINKS=/wheels
  PIP_DISABLE_PIP_VERSION_CHECK=1
  DEBIAN_FRONTEND=noninteractive
)
[ -z "${CI+set}" ] || CHROOT_ENV+=("CI=$CI")

in_root() {
  # The host's name resolution: apt needs DNS, and gloo (multi-process
  # tests) resolves this machine's host name, which only the host's
  # /etc/hosts may know. rm first: a symlink there would point the copy at
  # a host path.
  local file
  for file in resolv.conf hosts; do
    rm -f "$ROOT/etc/$file"
    cp -L "/etc/$file" "$ROOT/etc/$file" 2>/dev/null || true
  done
  mount_root
  run_waiting env -i "${CHROOT_ENV[@]}" chroot "$ROOT" /bin/bash -c "$1"
}

# --- the root ----------------------------------------------------------------

# The host's Debian main archive, read from its apt configuration
# (deb822 .sources files or one-line .list files), unless
# KERASMESH_DEBIAN_MIRROR names one.
host_debian_mirror() {
  if [ -n "${KERASMESH_DEBIAN_MIRROR:-}" ]; then
    echo "$KERASMESH_DEBIAN_MIRROR"; return 0
  fi
  local codename files=() uri
  # shellcheck source=/dev/null
  codename="$(. /etc/os-release && echo "${VERSION_CODENAME:-}")"
  shopt -s nullglob
  files=(/etc/apt/sources.list.d/*.sources)
  if [ "${#files[@]}" -gt 0 ]; then
    uri="$(awk -v suite="$codename" '
      BEGIN { RS = ""; FS = "\n" }
      {
        types = uris = suites = comps = ""
        for (i = 1; i <= NF; i++) {
          if ($i ~ /^[ \t]*#/) continue
          n = index($i, ":"); key = substr($i, 1, n - 1); val = substr($i, n + 1)
          if (key == "Types") types = val
          else if (key == "URIs") uris = val
          else if (key == "Suites") suites = val
          else if (key == "Components") comps = val
        }
        if ((" " types " ") ~ / deb / && (" " suites " ") ~ (" " suite " ") &&
            (" " comps " ") ~ / main /) {
          split(uris, u, " "); print u[1]; exit
        }
      }' "${files[@]}")"
  fi
  if [ -z "$uri" ]; then
    files=(/etc/apt/sources.list /etc/apt/sources.list.d/*.list)
    uri="$(cat "${files[@]}" 2>/dev/null | sed -e 's/\[[^]]*\]//' |
      awk -v suite="$codename" '$1 == "deb" && $3 == suite && / main( |$)/ {
        print $2; exit }')"
  fi
  shopt -u nullglob
  [ -n "$uri" ] || die "no Debian main archive for '$codename' in /etc/apt;" \
    "set KERASMESH_DEBIAN_MIRROR"
  echo "${uri%/}"
}

remove_root() {
  unmount_root || die "not removing $ROOT while something is mounted there"
  rm -rf --one-file-system "$ROOT"
}

build_root() {
  if [ -f "$STAMP" ] && [ "$(cat "$STAMP")" = "$ROOT_RECIPE" ]; then
    say "root cached: $ROOT"
    return 0
  fi
  if [ -e "$ROOT" ]; then
    say "removing an incomplete or outdated root"
    remove_root
  fi
  local start=$SECONDS
  MIRROR="$(host_debian_mirror)"
  if ! command -v debootstrap >/dev/null; then
    say "installing debootstrap on the host"
    apt-get update -q -o Acquire::http::Timeout=60 -o Acquire::Retries=3
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q \
      -o DPkg::Lock::Timeout=300 -o Acquire::http::Timeout=60 \
      --no-install-recommends debootstrap
  fi
  say "bootstrapping Debian $SUITE into $ROOT"
  RUN_LOG="$CACHE/debootstrap.log" run_waiting \
    timeout 1200 debootstrap --variant=minbase "$SUITE" "$ROOT" "$MIRROR" ||
    { scrub_logs; tail -n 30 "$CACHE/debootstrap.log" >&2
      die "debootstrap failed"; }

  # apt inside: bounded network waits, no daemons started by packages.
  cat >"$ROOT/etc/apt/apt.conf.d/90kerasmesh" <<'EOF'
Acquire::http::Timeout "60";
Acquire::https::Timeout "60";
Acquire::Retries "3";
APT::Install-Recommends "false";
EOF
  printf '#!/bin/sh\nexit 101\n' >"$ROOT/usr/sbin/policy-rc.d"
  chmod +x "$ROOT/usr/sbin/policy-rc.d"

  # What tools/setup.sh installs, too, so that its first run inside finds
  # it (it installs itself any package added to the list later).
  local packages
  packages="${BASE_PACKAGES[*]} ${DEBIAN_PACKAGES[*]}"
  say "installing into the root: $packages"
  RUN_LOG="$CACHE/apt.log" in_root "apt-get update -q &&
    apt-get install -y -q $packages && apt-get clean" ||
    { scrub_logs; tail -n 30 "$CACHE/apt.log" >&2
      die "apt-get in the root failed"; }
  scrub_logs
  unmount_root
  echo "$ROOT_RECIPE" >"$STAMP"   # last: the root is complete
  say "root built in $((SECONDS - start)) s"
}

# --- the wheels ----------------------------------------------------------------

WHEEL_ARGS=(--python-version 3.13 --implementation cp
  --platform manylinux_2_27_x86_64 --platform manylinux2014_x86_64
  --only-binary=:all:)

# A host Python with pip: the system one, else the host's virtualenv.
host_pip_python() {
  local venv="${KERASMESH_VENV:-$HOME/.virtualenvs/r-keras}"
  if python3 -m pip --version >/dev/null 2>&1; then echo python3
  elif [ -x "$venv/bin/python" ]; then echo "$venv/bin/python"
  else die "no Python with pip on the host to download wheels with"
  fi
}

requirement_files() { printf '%s\n' tools/requirements*.txt | LC_ALL=C sort; }
# Files the requirement files include (-r): part of the wheels' key.
PACKAGE_REQUIREMENTS=inst/python/requirements.txt

wheels_key() {
  local f
  { echo "${WHEEL_ARGS[*]}"
    for f in $(requirement_files) "$PACKAGE_REQUIREMENTS"; do
      echo "== $f"; cat "$f"
    done
  } | sha256sum | cut -c1-16
}

# Downloads the wheels on the host, once per set of requirement files, and
# puts them at /wheels in the root (hard links where possible). As
# tools/setup.sh installs them: tools/requirements.txt with the
# dependencies of what it lists, every other tools/requirements*.txt (such
# as the test packages) as the complete set it is, with --no-deps.
fetch_wheels() {
  local key dir f deps
  key="$(wheels_key)"
  dir="$CACHE/wheels/$key"
  if [ -f "$dir/.complete" ]; then
    say "wheels cached: $dir"
  else
    rm -rf "$dir.partial"
    mkdir -p "$dir.partial"
    for f in $(requirement_files); do
      deps=--no-deps
      [ "$f" != tools/requirements.txt ] || deps=
      say "downloading cp313 wheels for $f ${deps:+($deps)}"
      run_waiting "$(host_pip_python)" -m pip download -q \
        --disable-pip-version-check --timeout 60 --retries 3 \
        "${WHEEL_ARGS[@]}" $deps -r "$f" -d "$dir.partial" \
        2> >(grep -v 'is ignored: it is neither' >&2) ||
        die "pip download for $f failed"
    done
    touch "$dir.partial/.complete"
    mv "$dir.partial" "$dir"
    # Wheels for older requirement files are of no further use.
    find "$CACHE/wheels" -mindepth 1 -maxdepth 1 ! -name "$key" \
      -exec rm -rf {} +
  fi
  if [ "$(cat "$ROOT/wheels/.key" 2>/dev/null)" != "$key" ]; then
    rm -rf "$ROOT/wheels"
    cp -al "$dir" "$ROOT/wheels" 2>/dev/null || cp -a "$dir" "$ROOT/wheels"
    echo "$key" >"$ROOT/wheels/.key"
  fi
}

# --- the check -----------------------------------------------------------------

# Copies this working tree (tracked and untracked files that git does not
# ignore; no build outputs) to $SRC_IN_ROOT. setup.sh's stamp of the last
# copy stays, so that it reinstalls the R package in the root only when the
# package's files changed.
copy_tree() {
  local dest="$ROOT$SRC_IN_ROOT" stamp
  stamp="$(cat "$dest/.setup-stamp" 2>/dev/null || true)"
  rm -rf "$dest"
  mkdir -p "$dest"
  [ -z "$stamp" ] || echo "$stamp" >"$dest/.setup-stamp"
  if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
    git ls-files -z --cached --others --exclude-standard |
      while IFS= read -r -d '' f; do
        [ -e "$f" ] && printf '%s\0' "$f"
      done | tar --null -T - -cf - | tar -C "$dest" -xf -
  else
    tar --exclude=./check --exclude=./.git -cf - . | tar -C "$dest" -xf -
  fi
}

check() {
  build_root
  fetch_wheels
  copy_tree
  say "make check in the root ($SRC_IN_ROOT)"
  cat >"$ROOT/build/check.sh" <<'EOF'
set -e
. /etc/os-release
echo "stack: $PRETTY_NAME; $(R --version | head -n 1);" \
  "reticulate $(Rscript -e 'cat(format(packageVersion("reticulate")))');" \
  "$(python3 --version)"
# Finish what an interrupted apt run (a killed check) left half-configured
# in the cached root; apt refuses to install anything until it is done.
DEBIAN_FRONTEND=noninteractive dpkg --configure -a
cd "$1"
# uv, for the path of a CRAN user with reticulate's managed Python
# (tests/testthat/test-managed-python.R, which must run here): reticulate
# resolves kerasmesh's py_require() with it, offline from the wheels. pip
# installs it from the wheels (PIP_FIND_LINKS), outside any virtualenv.
rm -rf /opt/kerasmesh-uv /tmp/kerasmesh-pip
python3 -m venv /tmp/kerasmesh-pip
/tmp/kerasmesh-pip/bin/pip install -q --target /opt/kerasmesh-uv \
  -r tools/requirements-uv.txt
rm -rf /tmp/kerasmesh-pip
export KERASMESH_TEST_UV=/opt/kerasmesh-uv/bin/uv KERASMESH_TEST_WHEELS=/wheels
export KERASMESH_REQUIRE_MANAGED_PYTHON=true
# The tests of `make check`; lint is a property of the code, checked once on
# the main stack (Debian 13's lintr has other defaults).
make pytest rcheck
EOF
  local start=$SECONDS status=0
  in_root "bash /build/check.sh $SRC_IN_ROOT" || status=$?
  say "make check in the root ended with status $status after" \
    "$((SECONDS - start)) s; logs in $ROOT$SRC_IN_ROOT/check/"
  return "$status"
}

if [ "${1:-}" = root ]; then echo "$ROOT"; exit 0; fi

exec 9>"$CACHE/lock"
if ! flock -n 9; then
  say "waiting for another runner to release $CACHE/lock"
  flock -w 3600 9 || die "timed out waiting for $CACHE/lock"
fi
# Only now, holding the lock: the cleanup touches the shared root.
trap cleanup EXIT
trap 'on_signal INT' INT
trap 'on_signal TERM' TERM
trap 'on_signal HUP' HUP
trap 'on_signal PIPE' PIPE

case "${1:-}" in
  check) check ;;
  build) build_root; fetch_wheels ;;
  run)
    [ $# -eq 2 ] || die "usage: $0 run 'shell command'"
    build_root; fetch_wheels
    in_root "$2"
    ;;
  clean)
    remove_root
    rm -rf "$CACHE/wheels" "$CACHE"/*.log
    say "removed $ROOT and the wheels"
    ;;
  *) sed -n '2,13p' "$0" >&2; exit 2 ;;
esac
