#!/usr/bin/env bash
# The GPU check of kerasmesh's step time and memory (bench/gpu/README.md):
# on a machine with one H100, a Llama-shaped step trained and timed beside
# kerasmesh's figures for it, compiled on that GPU; joined with the same
# configurations compiled deviceless (deviceless.csv, made on CPUs).
#   bash bench/gpu/check.sh OUT_DIR
# Needs keras and keras-hub wheels in .whl/ (README.md says which) and
# finishes in about 6 minutes.
set -euo pipefail
out="${1:?an output directory}"
here="$(cd "$(dirname "$0")" && pwd)"
began=$SECONDS
python3 -m pip install -q --no-index --no-deps --no-compile \
  --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
export PYTHONPATH=/tmp/site PYTHONUNBUFFERED=1 KERAS_BACKEND=jax
nvidia-smi --query-gpu=name,power.limit,clocks.max.sm --format=csv \
  | tee "$out/gpu.txt"
python3 -c 'import jax, keras; print("jax", jax.__version__, "keras",
keras.__version__, jax.devices())' | tee -a "$out/gpu.txt"
timeout 480 python3 "$here/step_time.py" measure "$out/measured.csv"
python3 "$here/compare.py" "$out/measured.csv" "$here/deviceless.csv" \
  "$here/cpu.csv" | tee "$out/compare.txt"
echo "check took $((SECONDS - began)) s"
