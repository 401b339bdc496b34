# Layout axes between R and the shim: one converter for every place that
# takes axes (layout_map() rules, `[[<-`, `[<-`, sharding_picture()).
#
# Users have axes in several forms: a character vector with NA for an
# unsplit dimension (`c(NA, "model")`), a list with NULL
# (`list(NULL, "model")`), a keras3 / reticulate `tuple(NULL, "model")`, a
# Python list, or a Keras `TensorLayout`. R turns its own values into a list
# with NULL; Python objects go to the shim as they are. The shim
# (kerasmesh/axes.py) normalises both and checks their meaning: names of
# the mesh, each once, one mesh axis per dimension (Keras 3.15's layouts
# take no more), so every entry point accepts and rejects the same axes
# with the same `kerasmesh_error_layout_axes`.
axes_for_shim <- function(axes, key = NULL, arg = rlang::caller_arg(axes),
                          call = rlang::caller_env()) {
  if (inherits(axes, "python.builtin.object")) {
    return(axes)
  }
  if (is.logical(axes) && all(is.na(axes))) {
    axes <- as.character(axes)
  }
  if (is.character(axes) && !is.object(axes)) {
    return(na_to_null(unname(axes)))
  }
  if (is.list(axes) && !is.object(axes)) {
    entries <- lapply(unname(axes), axis_entry)
    bad <- vapply(entries, is_bad_entry, logical(1))
    if (!any(bad)) {
      return(entries)
    }
    first <- which(bad)[1]
    abort_axes(axes[[first]], key, arg, call,
               received = paste("Dimension", first, "is"))
  }
  abort_axes(axes, key, arg, call)
}

# Layout axes from Python (None, a name, or several names) as a character
# vector: NA for an unsplit dimension, several names joined with "+".
axes_from_python <- function(x) {
  vapply(x, function(a) {
    if (is.null(a)) NA_character_ else paste(unlist(a), collapse = "+")
  }, character(1), USE.NAMES = FALSE)
}

# One entry of an R list of axes: NULL for NULL or NA; several names as a
# list (the shim rejects them with its own message).
axis_entry <- function(a) {
  if (is.null(a) || (is.atomic(a) && length(a) == 1 && is.na(a))) {
    return(NULL)
  }
  if (is.character(a) && length(a) > 1 && !anyNA(a)) {
    return(as.list(a))
  }
  a
}

is_bad_entry <- function(a) {
  is_name <- function(n) is.character(n) && length(n) == 1 && !is.object(n)
  several <- is.list(a) && all(vapply(a, is_name, logical(1)))
  !(is.null(a) || several || is_name(a) ||
      inherits(a, "python.builtin.object"))
}

abort_axes <- function(x, key, arg, call, received = "Received") {
  subject <- if (is.null(key)) "{.arg {arg}}" else "The layout for {.val {key}}"
  stop_input_type(
    x, "mesh axis names, with NA for an unsplit dimension",
    subject = subject, received = received,
    way_out = 'For example {.code c(NA, "model")} or
           {.code tuple(NULL, "model")}.',
    kind = kinds$layout_axes, arg = arg, call = call
  )
}
