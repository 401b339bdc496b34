# kerasmesh: `make demo` runs the book's 2x4 mesh, `make check` the tests,
# `make check-debian13` the same tests on Debian 13 (in a cached chroot).
SHELL := /bin/bash
.ONESHELL:
.SHELLFLAGS := -eu -o pipefail -c

export KERASMESH_VENV ?= $(HOME)/.virtualenvs/r-keras
export NOT_CRAN := true
export KERASMESH_REQUIRE_PYTHON := true
# The GPU compiler's tests run where `make setup` installs it (the Debian
# 13 chroot checks the CPU's path: tools/debian13.sh sets both false).
export KERASMESH_GPU_COMPILER ?= true
export KERASMESH_REQUIRE_GPU_COMPILER ?= $(KERASMESH_GPU_COMPILER)
export LANG := C.UTF-8
export LC_ALL := C.UTF-8
export PYTHONDONTWRITEBYTECODE := 1
export _R_CHECK_CRAN_INCOMING_ := false
export _R_CHECK_CRAN_INCOMING_REMOTE_ := false
export _R_CHECK_SYSTEM_CLOCK_ := FALSE
PYTHON := $(KERASMESH_VENV)/bin/python

.PHONY: setup setup-site demo demo-fresh check pytest rcheck lint bench \
  document site site-check coverage check-debian13 test-chroot-cleanup \
  check-no-python

setup:
	bash tools/setup.sh

setup-site: setup
	bash tools/setup.sh site

demo: setup
	Rscript demo/book-mesh.R

# `make demo` from a newcomer's shell: KERAS_BACKEND, RETICULATE_PYTHON and
# XLA_FLAGS unset, Keras's keras.json saying "tensorflow" (then absent).
demo-fresh:
	bash tools/demo-fresh.sh

# Debian 13 (R 4.5, reticulate 1.41, Python 3.13) in a chroot cached under
# ~/.cache/kerasmesh/debian13: build what is missing, check that the runner
# leaves no mount behind, then `make check` on a copy of this tree inside.
# Needs root (debootstrap, mount, chroot), not the host's `make setup`.
check-debian13:
	bash tools/debian13.sh build
	bash tools/test-chroot-cleanup.sh
	bash tools/debian13.sh check

test-chroot-cleanup:
	bash tools/debian13.sh build
	bash tools/test-chroot-cleanup.sh

pytest: setup
	cd tests/python && $(PYTHON) -m pytest -q -p no:cacheprovider

document: setup
	Rscript -e 'roxygen2::roxygenise()'

rcheck: setup
	rm -rf check && mkdir -p check && cd check
	R CMD build .. >build.log 2>&1 || { cat build.log; exit 1; }
	R CMD check --as-cran --no-manual kerasmesh_*.tar.gz 2>&1 \
	  | tee check.log || true
	if ! grep -q "^Status: OK" check.log; then
	  for f in kerasmesh.Rcheck/tests/*.Rout.fail; do
	    [ -f "$$f" ] && tail -n 80 "$$f"
	  done
	  echo "R CMD check did not end with 'Status: OK'" >&2
	  exit 1
	fi

# lintr, ruff and shellcheck (tools/lint.sh).
lint: setup
	bash tools/lint.sh

# The R tests again without Python, after rcheck (whose log has the count
# with Python): none may fail, and at least 40% must still run.
check-no-python:
	bash tools/no-python.sh

check: pytest lint rcheck
	$(MAKE) --no-print-directory check-no-python

# The pkgdown site, built offline into site/ (git-ignored).
site: setup-site
	rm -rf site
	Rscript -e 'options(pkgdown.internet = FALSE)' \
	  -e 'source("tools/site-offline.R")' \
	  -e 'pkgdown::build_site(override = list(destination = "site"),' \
	  -e '  preview = FALSE, new_process = FALSE, install = FALSE)'

# Every page of the site in headless Chromium, served on 127.0.0.1.
site-check: site
	timeout 600 /usr/bin/python3 tools/site_check.py site

coverage: setup-site
	Rscript tools/coverage.R
	cd tests/python && $(PYTHON) -m pytest -q -p no:cacheprovider \
	  --cov=kerasmesh --cov-report=term \
	  | grep -E "^TOTAL|passed|failed" \
	  | sed 's/^TOTAL/Python shim line coverage (TOTAL)/'

# `make bench BENCH=hub_70b` runs one benchmark (see bench/run.R).
bench: setup
	Rscript bench/run.R $(BENCH)
