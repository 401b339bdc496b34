#!/usr/bin/env bash
# Installs what kerasmesh needs; a second run only checks and takes seconds.
#   - Debian packages (tools/debian-packages.sh): R and the r-cran-*
#     packages, pandoc, qpdf, Open MPI, Jupyter with the R kernel, shellcheck
#   - a Python (>= 3.11) virtualenv at $KERASMESH_VENV with keras and jax,
#     and the development tools (pytest, ruff) and test packages (keras-hub,
#     without TensorFlow)
#   - the kerasmesh R package itself
set -euo pipefail
cd "$(dirname "$0")/.."

VENV="${KERASMESH_VENV:-$HOME/.virtualenvs/r-keras}"
# shellcheck source=tools/debian-packages.sh
. tools/debian-packages.sh
if [ "${1:-}" = "site" ]; then
  DEBIAN_PACKAGES+=("${DEBIAN_SITE_PACKAGES[@]}")
fi

as_root() {
  if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi
}

missing=()
for pkg in "${DEBIAN_PACKAGES[@]}"; do
  status="$(dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null || true)"
  [ "$status" = "install ok installed" ] || missing+=("$pkg")
done
if [ "${#missing[@]}" -gt 0 ]; then
  echo "setup: installing Debian packages: ${missing[*]}"
  as_root apt-get update -q
  DEBIAN_FRONTEND=noninteractive as_root apt-get install -y -q \
    --no-install-recommends "${missing[@]}"
fi

# Says what keeps a Python from hosting the virtualenv (on stdout, one
# line), or nothing if it is fit: each requirement gets its own message.
python_problem() {
  "$1" - <<'PY' 2>&1 || echo "does not run"
import os, sys, sysconfig
version = ".".join(map(str, sys.version_info[:3]))
if sys.version_info < (3, 11):
    print(f"is Python {version}; kerasmesh needs Python >= 3.11 "
          "(Keras 3.15 and jax 0.10 do not support older ones)")
    sys.exit()
if not sysconfig.get_config_var("Py_ENABLE_SHARED"):
    print(f"(Python {version}) was built without a shared libpython "
          "(Py_ENABLE_SHARED is not set), so reticulate cannot embed it; "
          "use a Python built with --enable-shared")
    sys.exit()
lib = sysconfig.get_config_var("INSTSONAME") or sysconfig.get_config_var("LDLIBRARY")
libdir = sysconfig.get_config_var("LIBDIR") or ""
dirs = [libdir, os.path.join(libdir, sysconfig.get_config_var("MULTIARCH") or ""),
        sysconfig.get_config_var("LIBPL") or ""]
if lib and not any(os.path.exists(os.path.join(d, lib)) for d in dirs if d):
    print(f"(Python {version}) has no shared libpython installed ({lib} "
          f"is not in {libdir}), so reticulate cannot embed it; on Debian: "
          f"apt-get install libpython{sys.version_info[0]}.{sys.version_info[1]}")
    sys.exit()
try:
    import ensurepip, venv  # noqa: F401
except ImportError:
    print(f"(Python {version}) cannot create virtualenvs (no ensurepip); "
          "on Debian: apt-get install python3-venv")
PY
}

# The Python to build the virtualenv with: $KERASMESH_PYTHON when set (and
# only it), else python3. Says what is wrong with each one it rejects.
pick_python() {
  local candidates=(python3 /usr/bin/python3) candidate problem
  [ -z "${KERASMESH_PYTHON:-}" ] || candidates=("$KERASMESH_PYTHON")
  for candidate in "${candidates[@]}"; do
    if ! command -v "$candidate" >/dev/null 2>&1; then
      echo "setup: $candidate: not found" >&2
      continue
    fi
    problem="$(python_problem "$candidate")"
    if [ -z "$problem" ]; then
      echo "$candidate"; return 0
    fi
    echo "setup: $candidate $problem" >&2
  done
  return 1
}

if [ ! -x "$VENV/bin/python" ]; then
  python="$(pick_python)" || {
    echo "setup: no usable Python for the virtualenv (see above);" \
         "set KERASMESH_PYTHON to a Python >= 3.11 with a shared libpython" >&2
    exit 1
  }
  echo "setup: creating virtualenv $VENV with $python"
  "$python" -m venv "$VENV"
fi

# Whether every requirement in a file (and the files it includes with
# `-r`, such as the package's own inst/python/requirements.txt) is installed
# at its pinned version.
requirements_met() {
  "$VENV/bin/python" - "$1" <<'PY' 2>/dev/null
import os, sys
from importlib.metadata import version
from packaging.requirements import Requirement
def check(path):
    for line in open(path):
        line = line.split("#")[0].strip()
        if line.startswith("-r "):
            check(os.path.join(os.path.dirname(path), line[3:].strip()))
        elif line:
            req = Requirement(line)
            if not req.specifier.contains(version(req.name), prereleases=True):
                sys.exit(1)
check(sys.argv[1])
PY
}

if ! requirements_met tools/requirements.txt; then
  echo "setup: installing Python packages into $VENV"
  "$VENV/bin/python" -m pip install -q --disable-pip-version-check \
    -r tools/requirements.txt
fi
# Test packages (keras-hub) without their declared dependencies, which
# would pull in TensorFlow: the file lists all that is needed.
if ! requirements_met tools/requirements-test.txt; then
  echo "setup: installing test packages into $VENV"
  "$VENV/bin/python" -m pip install -q --disable-pip-version-check \
    --no-deps -r tools/requirements-test.txt
fi

# XLA's GPU compiler (JAX's CUDA plugin at the pinned JAX's version: what
# install_kerasmesh(gpu_compiler = TRUE) installs), so that the checks
# compile for GPUs without them as well as on the CPU. KERASMESH_GPU_COMPILER
# =false leaves it out (the Debian 13 chroot: the CPU's path).
jax_version="$(sed -n 's/^jax==//p' inst/python/requirements.txt)"
if [ "${KERASMESH_GPU_COMPILER:-true}" = true ]; then
  plugin="$(mktemp)"
  trap 'rm -f "$plugin"' EXIT
  echo "jax-cuda12-plugin==$jax_version" > "$plugin"
  if ! requirements_met "$plugin"; then
    echo "setup: installing XLA's GPU compiler (jax[cuda12]==$jax_version)"
    "$VENV/bin/python" -m pip install -q --disable-pip-version-check \
      "jax[cuda12]==$jax_version"
  fi
fi

stamp=".setup-stamp"
digest="$(find DESCRIPTION NAMESPACE R inst man -type f \
  -not -path '*__pycache__*' -print0 | sort -z | xargs -0 md5sum | md5sum)"
installed="$(Rscript -e 'cat(nzchar(system.file(package = "kerasmesh")))')"
if [ "$installed" != "TRUE" ] || [ ! -f "$stamp" ] || \
   [ "$(cat "$stamp")" != "$digest" ]; then
  echo "setup: installing the kerasmesh R package"
  R CMD INSTALL --no-test-load . >/dev/null
  echo "$digest" > "$stamp"
fi
echo "setup: ready (virtualenv $VENV)"
