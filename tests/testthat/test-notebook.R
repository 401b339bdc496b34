# The notebook kerasmesh ships (inst/notebooks/kerasmesh.ipynb), run by
# Jupyter's nbconvert with the R kernel (IRkernel), and its outputs read
# back: each kerasmesh object shows as its format(), never as repr's
# data-frame table, and each plot as a PNG. `make setup` installs Debian's
# jupyter-nbconvert, python3-ipykernel and r-cran-irkernel.

skip_if_no_jupyter <- function() {
  if (!nzchar(Sys.which("jupyter-nbconvert")) ||
      !requireNamespace("IRkernel", quietly = TRUE) ||
      !requireNamespace("jsonlite", quietly = TRUE)) {
    if (identical(Sys.getenv("KERASMESH_REQUIRE_PYTHON"), "true")) {
      stop("Jupyter's nbconvert and the R kernel (IRkernel) are required ",
           "(run `make setup`).")
    }
    skip("Jupyter's nbconvert or the R kernel (IRkernel) is not installed.")
  }
}

# The last cell added to the notebook before it runs: what format() gives
# for every kerasmesh object the notebook made, and its class, saved to
# the file `path`.
formats_cell <- function(path) {
  source <- c(
    "local({",
    "  env <- globalenv()",
    "  keep <- Filter(function(n) {",
    "    inherits(get(n, env), kerasmesh:::repr_classes)",
    "  }, ls(env))",
    "  saveRDS(lapply(stats::setNames(keep, keep), function(n) list(",
    "    class = class(get(n, env)),",
    "    text = paste(format(get(n, env)), collapse = \"\\n\")",
    sprintf("  )), %s)", deparse(path)),
    "})"
  )
  list(cell_type = "code", execution_count = NULL, id = "kerasmesh-formats",
       metadata = stats::setNames(list(), character()), outputs = list(),
       source = as.list(paste0(source, c(rep("\n", length(source) - 1), ""))))
}

# Runs the notebook `file` in `dir` with a hard time limit; returns the
# executed notebook (parsed) and the formats the last cell saved.
run_notebook <- function(file, dir, timeout = 240) {
  nb <- jsonlite::read_json(file, simplifyVector = FALSE)
  formats <- file.path(dir, "formats.rds")
  nb$cells <- c(nb$cells, list(formats_cell(formats)))
  input <- file.path(dir, "notebook.ipynb")
  jsonlite::write_json(nb, input, auto_unbox = TRUE, null = "null",
                       pretty = TRUE)
  # The kernel inherits the environment: this session's Python and
  # packages, Keras on JAX, Jupyter's and R's files in `dir`.
  withr::local_envvar(
    TMPDIR = dir,
    RETICULATE_PYTHON = kerasmesh:::python_path(), KERAS_BACKEND = "jax",
    R_LIBS = paste(.libPaths(), collapse = .Platform$path.sep),
    JAX_PLATFORMS = "cpu", JUPYTER_RUNTIME_DIR = file.path(dir, "runtime"),
    IPYTHONDIR = file.path(dir, "ipython")
  )
  run <- processx::run(
    Sys.which("jupyter-nbconvert"),
    c("--to", "notebook", "--execute", input, "--output", "executed",
      "--output-dir", dir, "--ExecutePreprocessor.timeout=120"),
    error_on_status = FALSE, timeout = timeout, stderr_to_stdout = TRUE,
    cleanup_tree = TRUE # the kernel too, after a timeout
  )
  list(run = run, formats = if (file.exists(formats)) readRDS(formats),
       nb = if (identical(run$status, 0L)) {
         jsonlite::read_json(file.path(dir, "executed.ipynb"),
                             simplifyVector = FALSE)
       })
}

# A cell's outputs that show a value (display_data or execute_result).
shown <- function(cell) {
  Filter(function(o) o$output_type %in% c("display_data", "execute_result"),
         cell$outputs)
}

# The last expression of a cell's source.
last_expression <- function(cell) {
  exprs <- parse(text = paste(unlist(cell$source), collapse = ""))
  exprs[[length(exprs)]]
}

test_that("the shipped notebook keeps no outputs", {
  skip_if_not_installed("jsonlite")
  file <- system.file("notebooks", "kerasmesh.ipynb", package = "kerasmesh")
  nb <- jsonlite::read_json(file, simplifyVector = FALSE)
  expect_identical(nb$metadata$kernelspec$name, "ir")
  for (cell in Filter(function(c) c$cell_type == "code", nb$cells)) {
    expect_length(cell$outputs, 0)
    expect_null(cell$execution_count)
  }
})

test_that("in Jupyter, objects show as their format() and plots as PNG", {
  skip_if_no_keras()
  skip_if_no_jupyter()
  skip_if_not_installed("processx")
  dir <- withr::local_tempdir()
  file <- system.file("notebooks", "kerasmesh.ipynb", package = "kerasmesh")
  out <- run_notebook(file, dir)
  expect_identical(out$run$status, 0L, info = out$run$stdout)
  expect_false(out$run$timeout)
  if (is.null(out$nb)) {
    return() # failed above, with nbconvert's output
  }
  cells <- Filter(function(c) c$cell_type == "code", out$nb$cells)
  objects <- character()
  plots <- 0
  for (cell in cells) {
    types <- vapply(cell$outputs, function(o) o$output_type, "")
    expect_false("error" %in% types, info = unlist(cell$source))
    last <- last_expression(cell)
    if (is.name(last) && as.character(last) %in% names(out$formats)) {
      name <- as.character(last)
      value <- shown(cell)
      expect_length(value, 1)
      data <- value[[1]]$data
      expect_identical(paste(unlist(data[["text/plain"]]), collapse = ""),
                       out$formats[[name]]$text, info = name)
      html <- paste(unlist(data[["text/html"]]), collapse = "")
      expect_match(html, "^<pre class=\"kerasmesh\">", info = name)
      expect_no_match(html, "<table", fixed = TRUE)
      expect_null(data[["text/markdown"]])
      expect_null(data[["text/latex"]])
      objects <- c(objects, out$formats[[name]]$class[1])
    } else if (is.call(last) && identical(last[[1]], as.name("plot"))) {
      value <- shown(cell)
      expect_length(value, 1)
      png <- unlist(value[[1]]$data[["image/png"]])
      expect_gt(sum(nchar(png)), 1000)
      expect_null(value[[1]]$data[["text/html"]])
      plots <- plots + 1
    }
  }
  # Every kind of object the notebook makes was displayed and checked:
  # the data frames underneath among them.
  made <- vapply(out$formats, function(f) f$class[1], "")
  expect_setequal(objects, made)
  expect_true(all(c("kerasmesh_layout_plan", "kerasmesh_sharding",
                    "kerasmesh_layout_comparison") %in% objects))
  expect_gte(plots, 5)
})
