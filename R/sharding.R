#' Where does each variable live?
#'
#' Reads the placement of every variable of a model — and, once it is
#' built, of its optimizer — from the placed JAX arrays (their
#' `NamedSharding`), not from the layout map. One row per variable.
#'
#' @param model A Keras model.
#' @param ... Must be empty.
#' @return A `kerasmesh_sharding` data frame with columns `path`, `source`
#'   (`"model"` or `"optimizer"`), `shape` (list of integer vectors),
#'   `dtype`, `axes` (list: the mesh axis each dimension is split over, `NA`
#'   when not split), `spec` (JAX's `PartitionSpec`), `shard_shape` (list),
#'   `copies` (devices holding each shard), `bytes` (the whole variable) and
#'   `device_bytes` (what one device holds). Attribute `"per_device"`: a
#'   data frame of the bytes each device holds in all; `"mesh"`: the
#'   [device_mesh()] the variables are placed on (`NULL` if none). See
#'   [sharding_picture()] to picture one variable's shards.
#' @export
#' @examplesIf keras_available()
#' simulate_devices(8)
#' mesh <- device_mesh(c(data = 2, model = 4))
#' lm <- layout_map(mesh, ".*dense.*kernel" = c(NA, "model"))
#' library(reticulate, include.only = "import")
#' keras <- import("keras")
#' model <- with_distribution(model_parallel(lm), {
#'   keras$Sequential(list(keras$Input(shape = list(16L)),
#'                         keras$layers$Dense(8L)))
#' })
#' variable_sharding(model)
variable_sharding <- function(model, ...) {
  check_call()
  check_python_object(model, "a Keras model", kind = kinds$model)
  columns <- shim_call("sharding.variable_sharding", model = model)
  per_device <- columns$per_device
  mesh <- columns$mesh
  columns$per_device <- NULL
  columns$mesh <- NULL
  n <- length(columns$path)
  as_int_list <- function(x) lapply(x, function(s) as.integer(unlist(s)))
  df <- data.frame(
    path = as.character(unlist(columns$path)),
    source = as.character(unlist(columns$source)),
    stringsAsFactors = FALSE
  )
  df$shape <- as_int_list(columns$shape)
  df$dtype <- as.character(unlist(columns$dtype))
  df$axes <- lapply(columns$axes, axes_from_python)
  df$spec <- vapply(columns$spec, function(s) s %||% NA_character_, "")
  df$shard_shape <- as_int_list(columns$shard_shape)
  df$copies <- as.integer(unlist(columns$copies))
  df$bytes <- as.numeric(unlist(columns$bytes))
  df$device_bytes <- as.numeric(unlist(columns$device_bytes))
  if (n == 0) {
    df <- df[0, ]
  }
  attr(df, "per_device") <- data.frame(
    device = as.character(unlist(per_device$device)),
    bytes = as.numeric(unlist(per_device$bytes)),
    stringsAsFactors = FALSE
  )
  attr(df, "mesh") <- if (!is.null(mesh)) new_device_mesh(mesh)
  class(df) <- c("kerasmesh_sharding", "data.frame")
  stamp_fields(df)
}

#' @export
format.kerasmesh_sharding <- function(x, ..., width = cli::console_width()) {
  check_dots_none()
  width <- check_whole(width)
  check_unedited(x)
  with_edits_named(x, {
    x <- as.data.frame(unclass_sharding(x))
    n <- nrow(x)
    header <- paste("<kerasmesh_sharding>", count_text(n, "variable"))
    if (n == 0) {
      return(header)
    }
    cols <- data.frame(
      shape = vapply(x$shape, format_dims, ""),
      axes = vapply(x$axes, format_axes_short, ""),
      shard = vapply(x$shard_shape, format_dims, ""),
      copies = as.character(x$copies),
      per_device = bytes_text(x$device_bytes),
      stringsAsFactors = FALSE
    )
    fixed <- sum(pmax(nchar(names(cols)), vapply(cols, function(c) {
      max(nchar(c))
    }, 1))) + 2 * ncol(cols) + 2
    path_width <- max(12, min(max(nchar(x$path)), width - fixed))
    table <- cbind(path = truncate_left(x$path, path_width), cols)
    per_device <- attr(x, "per_device")
    c(header, format_table(table, right = c("copies", "per_device")),
      if (!is.null(per_device) && nrow(per_device) > 0) {
        sprintf("Per device: %s", summarize_device_bytes(per_device))
      })
  })
}

#' @export
print.kerasmesh_sharding <- function(x, ...) {
  writeLines(format(x, ...))
  invisible(x)
}

# A report's rows are a report (rows_as_made()), without the bytes per
# device of all its rows unless it keeps each of them once.
#' @export
`[.kerasmesh_sharding` <- function(x, ...) {
  check_subset_names()
  check_unedited(x)
  out <- NextMethod()
  every_row <- function() {
    length(out$path) == length(x$path) && setequal(out$path, x$path)
  }
  if (is.data.frame(out) && !every_row()) {
    attr(out, "per_device") <- NULL
  }
  rows_as_made(x, out, key = "path", of_all_rows = "per_device")
}

unclass_sharding <- function(x) {
  per_device <- attr(x, "per_device")
  class(x) <- "data.frame"
  attr(x, "per_device") <- per_device
  x
}

summarize_device_bytes <- function(per_device) {
  range <- unique(bytes_text(range(per_device$bytes)))
  n <- nrow(per_device)
  sprintf(if (n == 1) "%s on its %d device" else "%s on each of %d devices",
          paste(range, collapse = " to "), n)
}

format_axes_short <- function(axes) {
  if (length(axes) == 0) {
    return("()")
  }
  paste0("(", paste(ifelse(is.na(axes), "NA", axes), collapse = ", "), ")")
}
