#!/usr/bin/env bash
# `make check-no-python`: the R tests without Python. Runs tests/testthat
# against the package `make rcheck` installed (check/kerasmesh.Rcheck), or
# against the source (pkgload::load_all()) when there is none, where no
# Python can be found: an empty HOME (no ~/.virtualenvs), KERASMESH_VENV
# pointing at nothing, RETICULATE_PYTHON and KERASMESH_REQUIRE_PYTHON
# unset. Fails if any test fails or errors, or if fewer than 40% of the
# expectations that pass with Python (R CMD check's count, in
# check/kerasmesh.Rcheck/tests/testthat.Rout) pass without it.
#
#   tools/no-python.sh [PASS_WITH_PYTHON]
#
# PASS_WITH_PYTHON overrides the count read from R CMD check's log.
# Installs nothing.
set -euo pipefail
cd "$(dirname "$0")/.."

home="$(mktemp -d "${TMPDIR:-/tmp}/kerasmesh-no-python.XXXXXX")"
trap 'rm -rf "$home"' EXIT

# R's site and user libraries as they are now: the empty HOME must not hide
# a user library that holds testthat or pkgload.
r_libs="$(Rscript -e 'cat(.libPaths(), sep = ":")')"

env -u RETICULATE_PYTHON -u RETICULATE_PYTHON_ENV \
  -u RETICULATE_PYTHON_FALLBACK \
  -u KERASMESH_REQUIRE_PYTHON -u VIRTUAL_ENV -u PYTHONHOME -u PYTHONPATH \
  HOME="$home" KERASMESH_VENV=/nonexistent NOT_CRAN=true \
  R_LIBS="$r_libs" R_LIBS_USER="$home/R" \
  Rscript tools/no-python.R "$@"
