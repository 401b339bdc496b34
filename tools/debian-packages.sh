# shellcheck shell=bash disable=SC2034
# The Debian packages kerasmesh's development needs: the one list, sourced
# (not run) by tools/setup.sh, which installs them, and tools/debian13.sh,
# which puts them in its Debian 13 root so that setup.sh finds them there.
DEBIAN_PACKAGES=(
  r-base-core r-base-dev r-cran-reticulate r-cran-cli r-cran-rlang
  r-cran-testthat r-cran-withr r-cran-callr r-cran-processx r-cran-knitr
  r-cran-rmarkdown r-cran-roxygen2 pandoc qpdf
  r-cran-ggplot2 r-cran-png r-cran-lintr r-cran-vdiffr
  shellcheck # the shell scripts' linter (make lint)
  openmpi-bin # mpirun, for the multi-process tests (tests/testthat/test-mpirun.R)
  # Jupyter with the R kernel, for the notebook test (tests/testthat/test-notebook.R)
  jupyter-nbconvert python3-ipykernel r-cran-irkernel r-cran-repr
)
# `setup.sh site`: also what `make site`, `site-check` and `coverage` need.
DEBIAN_SITE_PACKAGES=(
  r-cran-pkgdown r-cran-covr chromium chromium-driver python3-selenium
)
