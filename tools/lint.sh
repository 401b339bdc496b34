#!/usr/bin/env bash
# `make lint`: lintr on the R code (tools/lint.R, .lintr), ruff on the
# Python (ruff.toml) and shellcheck on the shell scripts (.shellcheckrc).
# Runs all three, and fails if one finds anything or is missing.
set -euo pipefail
cd "$(dirname "$0")/.."

VENV="${KERASMESH_VENV:-$HOME/.virtualenvs/r-keras}"
status=0

Rscript tools/lint.R || status=1

# ruff is one of the development tools in tools/requirements.txt.
if [ ! -x "$VENV/bin/ruff" ]; then
  echo "lint: ruff is not installed in $VENV: run 'make setup', which" \
       "installs tools/requirements.txt there" >&2
  status=1
elif "$VENV/bin/ruff" check --no-cache --quiet .; then
  echo "lint: ruff: no findings"
else
  status=1
fi

# The Debian package shellcheck is in tools/debian-packages.sh.
if ! command -v shellcheck >/dev/null; then
  echo "lint: shellcheck is not installed: run 'make setup', which" \
       "installs it with apt-get" >&2
  status=1
elif shellcheck tools/*.sh .ci/run; then
  echo "lint: shellcheck: no findings"
else
  status=1
fi
exit "$status"
