# Byte counts, in one place: the one parser of a size a user gives
# (`memory = "80GB"`, "16 GiB", 512e6) and of a rate in bytes or bits per
# second ("450GB/s"), and the one way a count is written ("1.5 GB", powers
# of 1000).

#' Format byte counts
#'
#' `format_bytes()` is deprecated: it is a formatting helper, not part of
#' what kerasmesh is for, and will be removed in the next release. Every
#' kerasmesh object prints its byte counts itself; for a number of your
#' own, use `format(structure(x, class = "object_size"), units = "auto",
#' standard = "SI")`.
#'
#' @param bytes Numbers of bytes: a numeric vector (`NA` gives `NA`) or
#'   a list of single numbers; anything else is an error of class
#'   `kerasmesh_error_argument`.
#' @param ... Must be empty.
#' @return A character vector such as `"1.5 GB"` (powers of 1000).
#' @keywords internal
#' @export
#' @examples
#' suppressWarnings(format_bytes(c(512, 2048, 6.2e9)))
format_bytes <- function(bytes, ...) {
  deprecated_function(
    "format_bytes", "Format your own counts with {.code format(structure(x,
      class = \"object_size\"), units = \"auto\", standard = \"SI\")}."
  )
  check_call()
  counts <- if (is.list(bytes)) unlist(bytes) else bytes
  if (!is.numeric(counts) || any(counts < 0 | is.infinite(counts),
                                 na.rm = TRUE)) {
    stop_input_type(bytes, "numbers of bytes (0 or more, or NA)")
  }
  bytes_text(bytes)
}

# A size a user gives: bytes (a number, one at least), or a string such as
# "80GB", "16 GiB" or "512mb" (units B, kB, MB, GB, TB in powers of 1000,
# KiB, MiB, GiB, TiB in powers of 1024, in any case: unlike a rate's, a
# size's lowercase b is a byte). Returns the bytes, a double with
# attribute "label" (what the user wrote, trimmed, or bytes_text() of the
# number); NULL where `allow_null`; Inf (labelled "none") for the number
# Inf where `allow_inf` (a string past a double's range, "1e999GB", is an
# error like "0GB").
check_bytes <- function(x, allow_null = TRUE, allow_inf = FALSE,
                        kind = kinds$argument, arg = rlang::caller_arg(x),
                        call = rlang::caller_env()) {
  if (allow_null && is.null(x)) {
    return(NULL)
  }
  if (allow_inf && identical(x, Inf)) {
    return(structure(Inf, label = "none"))
  }
  bytes <- bytes_of(x)
  if (is.null(bytes) && (is_size_text(x) || is_one_number(x))) {
    abort_not_finite(x, "size", kind, arg, call)
  }
  if (is.null(bytes)) {
    stop_input_type(
      x, "a number of bytes or a size such as {.val 80GB}",
      way_out = "Units: B, kB, MB, GB, TB (powers of 1000) or KiB, MiB, GiB,
                 TiB (powers of 1024), in any case: a size counts bytes
                 ({.val 80Gb} is 80 GB).",
      kind = kind, arg = arg, call = call
    )
  }
  if (bytes < 1) {
    kerasmesh_abort(c("{.arg {arg}} must be at least one byte.",
                      x = "Received {.val {x}}."),
                    kind = kind, call = call)
  }
  structure(bytes, label = if (is.character(x)) trimws(x) else
    bytes_text(bytes))
}

# The bytes `x` means, or NULL when it is not a positive, finite size.
bytes_of <- function(x) {
  if (is.numeric(x) && length(x) == 1 && !is.na(x) && is.finite(x) &&
        x > 0) {
    return(as.numeric(x))
  }
  bytes <- size_value(x)
  if (is.null(bytes) || !is.finite(bytes) || bytes <= 0) NULL else bytes
}

# The bytes a size written as text comes to ("1e999GB": Inf), or NULL when
# `x` is not written as a size.
size_value <- function(x) {
  m <- size_parts(x)
  if (is.null(m)) {
    return(NULL)
  }
  as.numeric(m[["number"]]) * size_units[[m[["unit"]]]]
}

size_units <- c(b = 1, kb = 1e3, mb = 1e6, gb = 1e9, tb = 1e12,
                kib = 2^10, mib = 2^20, gib = 2^30, tib = 2^40)

# A size's number and unit (lowercase) as written, or NULL when `x` is not
# written as a size.
size_parts <- function(x) {
  if (!is.character(x) || length(x) != 1 || is.na(x)) {
    return(NULL)
  }
  m <- regmatches(x, regexec(
    paste0("^\\s*((?:[0-9]+\\.?[0-9]*|\\.[0-9]+)(?:[eE][+-]?[0-9]+)?)",
           "\\s*([A-Za-z]*)\\s*$"), x,
    perl = TRUE
  ))[[1]]
  unit <- tolower(if (length(m) && nzchar(m[3])) m[3] else "b")
  if (length(m) == 0 || !unit %in% names(size_units)) {
    return(NULL)
  }
  c(number = m[2], unit = unit)
}

# `x`, a number or written as a size or rate (`what`), is zero, negative
# or past a double's range.
abort_not_finite <- function(x, what, kind, arg, call) {
  kerasmesh_abort(c("{.arg {arg}} must be a positive, finite {what}.",
                    x = "Received {.val {x}}."),
                  kind = kind, call = call)
}

# Whether `x` is one number (NA aside).
is_one_number <- function(x) is.numeric(x) && length(x) == 1 && !is.na(x)

# Whether `x` is written as a size (its value aside: "0GB", "1e400GB").
is_size_text <- function(x) !is.null(size_parts(x))

# Bytes per second: a number, or "450GB/s", "400Gb/s" (a lowercase b
# counts bits), "1.5 TiB/s". A string that is not a rate is reported as one
# (its number is read by bytes_of(), the one reader of sizes).
check_rate <- function(x, kind = kinds$argument, arg = rlang::caller_arg(x),
                       call = rlang::caller_env()) {
  rate <- if (is.character(x) && length(x) == 1 && !is.na(x)) {
    rate_of(x, kind, arg, call)
  } else {
    x
  }
  if (is_one_number(rate) && rate > 0 && rate < 1) {
    kerasmesh_abort(c("{.arg {arg}} must be at least one byte per second.",
                      x = "Received {.val {x}}."),
                    kind = kind, call = call)
  }
  rate
}

# Bytes per second in a rate string such as "450GB/s" or "400 Gb/s".
rate_of <- function(x, kind, arg, call) {
  m <- regmatches(x, regexec(
    "^\\s*(\\S+?)\\s*([kKmMgGtT]?i?)(B|b|bit)\\s*(/\\s*s|ps)\\s*$", x
  ))[[1]]
  bytes <- if (length(m) > 0) bytes_of(paste0(m[2], m[3], "B"))
  if (is.null(bytes) && length(m) > 0 &&
        is_size_text(paste0(m[2], m[3], "B"))) {
    abort_not_finite(x, "rate", kind, arg, call)
  }
  if (is.null(bytes)) {
    stop_input_type(x, "bytes per second or a rate such as {.val 450GB/s}",
                    kind = kind, arg = arg, call = call,
                    way_out = "Units: B/s, kB/s, ... TB/s (bytes), b/s,
                               ... Tb/s (bits), KiB/s, ... TiB/s.")
  }
  if (m[4] == "B") bytes else bytes / 8
}

# Whether a layout that needs `need` bytes per device fits `memory` (from
# check_bytes(); NULL gives NULL), vectorised over `need`. Which bytes a
# layout needs is the shim's one definition (core/fits.py: XLA's total for a
# compiled step, the plan's total where nothing was compiled), carried in
# every cost, plan and search as `need`; this is its comparison, for a
# `memory` given at print time.
fits_memory <- function(need, memory) {
  if (is.null(memory)) NULL else need <= memory
}

# Byte counts as text: "512 B", "2.05 kB", "6.2 GB", "0.5 B" (powers of
# 1000, three significant digits), NA as NA; what every print-out and
# picture shows.
bytes_text <- function(bytes, arg = rlang::caller_arg(bytes),
                       call = rlang::caller_env()) {
  if (is.list(bytes) && all(vapply(bytes, function(b) {
    is.numeric(b) && length(b) == 1
  }, TRUE))) {
    bytes <- vapply(bytes, identity, numeric(1), USE.NAMES = FALSE)
  }
  if (!is.numeric(bytes) && !(is.logical(bytes) && all(is.na(bytes)))) {
    stop_input_type(bytes, "a numeric vector of bytes", arg = arg, call = call)
  }
  units <- c("B", "kB", "MB", "GB", "TB", "PB")
  out <- character(length(bytes))
  for (i in seq_along(bytes)) {
    b <- bytes[[i]]
    if (is.na(b)) {
      out[i] <- NA_character_
      next
    }
    if (!is.finite(b) || b < 0) {
      out[i] <- paste(format(b), "B")
      next
    }
    power <- if (b < 1000) 0 else min(floor(log(b, 1000)), length(units) - 1)
    # 999,999 B is "1 MB", not "1000 kB".
    if (power < length(units) - 1 && signif(b / 1000^power, 3) >= 1000) {
      power <- power + 1
    }
    value <- b / 1000^power
    # Past the largest unit, a power of ten: "1e+285 PB", not 286 digits.
    out[i] <- sprintf("%s %s", trimws(formatC(
      value, digits = 3, format = if (value < 1e5) "fg" else "g"
    )), units[power + 1])
  }
  out
}
