#' Each process's share of the data
#'
#' In a run of several processes, each process feeds `fit()` only its part
#' of every global batch: with `auto_shard_dataset = FALSE`, Keras builds
#' each global batch from the processes' parts, in process order. For a
#' global batch of `batch_size` rows and `processes` processes, process `p`
#' feeds rows `p * b + 1, ..., (p + 1) * b` of each batch, where
#' `b = batch_size / processes` is the per-process batch size.
#'
#' `process_rows()` gives those rows of an `n`-row dataset for one process.
#' `process_data()` takes them from R arrays (the first dimension indexes
#' rows), as NumPy arrays for `fit()`, with the per-process batch size:
#' every process that calls `fit(d$x, d$y, batch_size = d$batch_size,
#' shuffle = FALSE)` then trains on the same global batches as one process
#' would with all rows and `batch_size`.
#'
#' A last, partial batch is split evenly: each process feeds
#' `floor(rest / processes)` of its `rest` rows, and the rows left over are
#' not fed (with a warning of class `kerasmesh_warning_rows_dropped`).
#'
#' @param n The number of rows of the whole dataset.
#' @param batch_size The global batch size, a multiple of `processes`.
#' @param process,processes This process's index and the number of
#'   processes (at most 1,048,576, as [distributed_initialize()] allows);
#'   by default [process_index()] and [process_count()].
#' @return `process_rows()`: an integer vector of row numbers, in order.
#'   `process_data()`: a list with `x`, `y` (NumPy arrays of this process's
#'   rows; `y` is `NULL` without `y`), `rows` and `batch_size` (the
#'   per-process batch size to pass to `fit()`).
#' @seealso `vignette("multi-process", package = "kerasmesh")`.
#' @export
#' @examples
#' # Rows of a 40-row dataset, global batches of 16, for process 1 of 2.
#' process_rows(40, 16, process = 1, processes = 2)
#' @examplesIf keras_available()
#' x <- matrix(runif(64 * 3), 64)
#' y <- matrix(runif(64), 64)
#' d <- process_data(x, y, batch_size = 16)
#' d$batch_size # 16 on a process on its own
process_rows <- function(n, batch_size, process = process_index(),
                         processes = process_count(), ...) {
  check_dots_none()
  n <- check_whole(n, min = 0, what = "a whole number of rows (0 or more)")
  batch_size <- check_whole(batch_size)
  processes <- check_whole(processes, max = max_processes_of_a_run)
  process <- check_whole(process, min = 0, max = processes - 1,
                         what = "a whole number from 0 to {processes - 1}")
  share <- batch_share(batch_size, processes)
  full <- n %/% batch_size
  rest <- n - full * batch_size
  last <- rest %/% processes
  if (rest %% processes != 0) {
    kerasmesh_warn(
      c("{rest %% processes} row{?s} of the last batch {?is/are} not fed.",
        i = "Its {rest} row{?s} {?doesn't/don't} split evenly over
             {processes} processes."),
      kind = kinds$rows_dropped
    )
  }
  # One run of rows per batch, made in place by sequence(): memory stays
  # the size of the result (plus two vectors of one number per batch).
  starts <- c((seq_len(full) - 1) * batch_size + process * share,
              if (last > 0) full * batch_size + process * last)
  sizes <- c(rep.int(share, full), if (last > 0) last)
  sequence(nvec = as.integer(sizes), from = as.integer(starts + 1))
}

#' @rdname process_rows
#' @param x,y R arrays (vectors, matrices or arrays) of all rows, the rows
#'   along the first dimension; or, with `rows = NULL`, of this process's
#'   rows only (each process read its own).
#' @param rows The rows this process feeds: whole numbers from 1 to the
#'   number of rows of `x` (any other value, such as `0`, `-1`, `NA`, a
#'   logical vector or a row beyond the last, is an error of class
#'   `kerasmesh_error_argument` that names the bad rows); `NULL` when `x`
#'   and `y` hold only this process's rows already.
#' @param dtype The NumPy dtype of the arrays.
#' @param ... Must be empty.
#' @export
process_data <- function(x, y = NULL, batch_size,
                         rows = process_rows(n_rows(x), batch_size),
                         dtype = "float32", ...) {
  check_dots_none()
  batch_size <- check_whole(batch_size)
  check_numbers(x)
  if (!is.null(y)) check_numbers(y)
  check_string(dtype)
  # NA said of the array the user gave, at its own positions, before its
  # rows are taken (and before Python starts).
  check_no_na(x)
  if (!is.null(y)) check_no_na(y)
  rows <- check_row_numbers(rows, n_rows(x))
  share <- batch_share(batch_size, process_count())
  if (!is.null(y) && n_rows(y) != n_rows(x)) {
    kerasmesh_abort(
      c("{.arg x} and {.arg y} must have the same number of rows.",
        x = "{.arg x} has {n_rows(x)}, {.arg y} has {n_rows(y)}."),
      kind = kinds$argument
    )
  }
  list(
    x = as_numpy(take_rows(x, rows), dtype, "x", rows, n_rows(x)),
    y = if (!is.null(y)) as_numpy(take_rows(y, rows), dtype, "y", rows,
                                  n_rows(y)),
    rows = rows,
    batch_size = share
  )
}

# Helpers --------------------------------------------------------------------

# The most processes of a run, as distributed_initialize() allows (2^20).
max_processes_of_a_run <- 2^20

# The per-process batch size, checking that the global one splits evenly.
batch_share <- function(batch_size, processes, call = rlang::caller_env()) {
  if (batch_size %% processes != 0) {
    kerasmesh_abort(
      c("{.arg batch_size} must be a multiple of the number of processes
         ({processes}).",
        x = "Received {batch_size}.",
        i = "Each process feeds {.code batch_size / processes} rows of
             every global batch."),
      kind = kinds$argument, call = call
    )
  }
  batch_size %/% processes
}

n_rows <- function(x) {
  if (is.null(dim(x))) length(x) else dim(x)[1]
}

# `x[rows, ...]`, keeping every other dimension.
take_rows <- function(x, rows) {
  if (is.null(rows)) {
    return(x)
  }
  d <- dim(x)
  if (is.null(d)) {
    return(x[rows])
  }
  index <- c(list(rows), lapply(d[-1], seq_len)) # (TRUE fails on 0 columns)
  do.call(`[`, c(list(x), index, list(drop = FALSE)))
}

# Row numbers into `n` rows (NULL stays NULL): whole numbers from 1 to
# `n`, not a logical index, no NA, no negative (dropping) index.
check_row_numbers <- function(rows, n, arg = rlang::caller_arg(rows),
                              call = rlang::caller_env()) {
  if (is.null(rows)) {
    return(NULL)
  }
  what <- "row numbers, whole numbers from 1 to {n}"
  if (!is.numeric(rows)) {
    stop_input_type(rows, what, arg = arg, call = call)
  }
  bad <- is.na(rows) | rows < 1 | rows > n | rows != round(rows)
  if (any(bad)) {
    # nolint start: object_usage_linter. cli uses them.
    shown <- paste(format(utils::head(rows[bad], 5)), collapse = ", ")
    more <- if (sum(bad) > 5) ", ..." else ""
    # nolint end
    kerasmesh_abort(
      c(paste0("{.arg {arg}} must be ", what, "."),
        x = "{cli::qty(sum(bad))}Bad row number{?s}: {shown}{more}.",
        i = "{.arg x} has {n} row{?s}."),
      kind = kinds$argument, call = call
    )
  }
  as.integer(rows)
}
