#!/usr/bin/env bash
# `make demo-fresh`: the README's first command as a newcomer runs it on a
# fresh machine. Nothing of kerasmesh's is exported (KERAS_BACKEND,
# RETICULATE_PYTHON, XLA_FLAGS, JAX_PLATFORMS unset) and Keras's own
# config, given through KERAS_HOME, says "tensorflow" (as Keras writes it
# on a first import without KERAS_BACKEND), then is absent. Fails if the
# demo fails or does not print the mesh and the kernel's sharding.
#
#   tools/demo-fresh.sh [COMMAND...]
#
# COMMAND defaults to `make --no-print-directory demo`; give another (such
# as `Rscript demo/book-mesh.R` with R_LIBS set) to run the demo without
# `make setup`.
set -euo pipefail
cd "$(dirname "$0")/.."

if [ "$#" -eq 0 ]; then
  set -- make --no-print-directory demo
fi

home="$(mktemp -d "${TMPDIR:-/tmp}/kerasmesh-demo-fresh.XXXXXX")"
trap 'rm -rf "$home"' EXIT

expect() {
  local log="$1" what="$2" pattern="$3"
  if ! grep -Eq "$pattern" "$log"; then
    echo "demo-fresh: the demo did not print $what" >&2
    return 1
  fi
}

for config in tensorflow absent; do
  keras_home="$home/$config"
  mkdir -p "$keras_home"
  if [ "$config" = tensorflow ]; then
    printf '{"backend": "tensorflow"}\n' >"$keras_home/keras.json"
  fi
  log="$home/$config.log"
  echo "demo-fresh: keras.json $config, KERAS_BACKEND unset"
  if ! env -u KERAS_BACKEND -u RETICULATE_PYTHON -u XLA_FLAGS \
      -u JAX_PLATFORMS KERAS_HOME="$keras_home" "$@" >"$log" 2>&1; then
    cat "$log"
    echo "demo-fresh: the demo failed (keras.json $config)" >&2
    exit 1
  fi
  cat "$log"
  expect "$log" "the mesh" '^<kerasmesh_device_mesh> 2 .+ 4 \(data .+ model\)'
  expect "$log" "the kernel's sharding" \
    "^The first kernel's actual sharding: PartitionSpec\(None, 'model'\)"
done
echo "demo-fresh: the demo runs from a newcomer's shell"
