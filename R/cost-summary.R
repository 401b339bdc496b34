# A layout cost's collective bytes by variable and by layer: summary() of a
# cost, and the table it returns.

#' Traffic of a layout cost by variable or layer
#'
#' `summary(cost, by = "variable")` says which variables the collectives of
#' one training step move bytes for, and `by = "layer"` which layers: bytes
#' per device per step, read from the op metadata XLA keeps in the compiled
#' step (the name scopes Keras opens for each layer call).
#'
#' A collective's array goes to a layer when the name scopes of the
#' operation it came from match that layer's path (as the variables' paths
#' name it), and to a variable of that layer when the array has the
#' variable's size (on one device, or gathered): a gradient or a gathered
#' weight. Activations a layer gathers are its layer's, not a variable's.
#' Collectives without metadata (such as the optimizer's update, gathered
#' back to the weight's layout), those of the loss, and names that match no
#' layer or several stay unattributed: the printed share says how much of
#' all collective bytes could be attributed.
#'
#' @param object A [layout_cost()] result.
#' @param ... Must be empty.
#' @param by `"variable"` or `"layer"`; `NULL` (the default) gives the
#'   summary of the object as a list, as before.
#' @return For `by = "variable"`, a data frame of class
#'   `kerasmesh_cost_traffic` with columns `variable`, `layer`, `bytes`
#'   (per device per step) and `share` (of all collective bytes), largest
#'   first; for `by = "layer"`, columns `layer`, `bytes` and `share`.
#'   Attributes `total` (all collective bytes), `attributed` (the bytes in
#'   the rows) and `to_layers` (the bytes attributed to some layer). It
#'   prints as a table with the attributed share.
#' @seealso [layout_cost()]
#' @export
#' @examplesIf keras_available()
#' simulate_devices(8)
#' mesh <- device_mesh(c(data = 2, model = 4))
#' lm <- layout_map(mesh, ".*dense.*kernel" = c(NA, "model"),
#'                  ".*dense.*bias" = "model")
#' library(reticulate, include.only = "import")
#' keras <- import("keras")
#' build <- function() {
#'   keras$Sequential(list(
#'     keras$Input(shape = list(32L)),
#'     keras$layers$Dense(64L, activation = "relu"),
#'     keras$layers$Dense(16L)
#'   ))
#' }
#' cost <- layout_cost(build, model_parallel(lm), batch_size = 16,
#'                     optimizer = "adam", loss = "mse")
#' summary(cost, by = "variable")
#' summary(cost, by = "layer")
summary.kerasmesh_layout_cost <- function(object, ..., by = NULL) {
  check_dots_none()
  check_cost_object(object, prefix = "object")
  if (!is.null(by)) {
    by <- check_choice(by, c("variable", "layer"), all_means_first = FALSE)
  }
  check_unedited(object, prefix = "object")
  with_edits_named(object, {
    if (is.null(by)) {
      return(NextMethod())
    }
    att <- object$attribution %||% new_cost_attribution(NULL)
    total <- sum(object$collectives$bytes)
    rows <- if (by == "variable") att$variables else att$layers
    rows$share <- if (total > 0) rows$bytes / total else rows$bytes
    stamp_fields(structure(rows, total = total,
                           attributed = sum(rows$bytes),
                           to_layers = sum(att$layers$bytes), by = by,
                           class = c("kerasmesh_cost_traffic", "data.frame")))
  }, prefix = "object")
}

#' @export
format.kerasmesh_cost_traffic <- function(x, ..., n = 20,
                                          max_rows = deprecated()) {
  check_dots_none()
  n_arg <- typed_name("n", "max_rows")
  n <- renamed_arg("n", "max_rows")
  n <- check_whole(n, min = 0, arg = n_arg)
  check_unedited(x)
  with_edits_named(x, {
    total <- attr(x, "total")
    attributed <- attr(x, "attributed")
    by <- attr(x, "by")
    head <- sprintf(
      "<kerasmesh_cost_traffic> collectives per device per step by %s", by)
    if (total == 0) {
      return(c(head, "No collectives."))
    }
    shown <- utils::head(as.data.frame(x), n)
    table <- data.frame(shown[[by]], bytes_text(shown$bytes),
                        sprintf("%.1f%%", 100 * shown$share),
                        stringsAsFactors = FALSE)
    names(table) <- c(by, "bytes", "share")
    if (by == "variable") {
      table <- table[, c("variable", "bytes", "share")]
    }
    part <- function(bytes, what) {
      sprintf("%s (%.1f%%) %s", bytes_text(bytes), 100 * bytes / total, what)
    }
    to_layers <- attr(x, "to_layers")
    c(head,
      sprintf("Of %s: %s,", bytes_text(total), part(attributed,
                                                      paste("to a", by))),
      paste0("  ", if (by == "variable") {
        paste0(part(to_layers - attributed, "to a layer only"), ", ")
      }, part(total - max(attributed, to_layers), "unattributed")),
      if (nrow(table)) format_table(table, right = c("bytes", "share")),
      if (nrow(x) > n) {
        sprintf("  ... %s not shown", count_text(nrow(x) - n, by))
      })
  })
}

#' @export
print.kerasmesh_cost_traffic <- function(x, ...) {
  writeLines(format(x, ...))
  invisible(x)
}

# A summary's rows are a summary (rows_as_made()).
#' @export
`[.kerasmesh_cost_traffic` <- function(x, ...) {
  check_subset_names()
  check_unedited(x)
  rows_as_made(x, NextMethod(), key = attr(x, "by"))
}

# The shim's attribution (cost/attribution.py) as data frames; NULL (a cost
# described before attribution existed) as nothing attributed.
new_cost_attribution <- function(desc) {
  v <- desc$variables
  l <- desc$layers
  list(
    variables = data.frame(
      variable = as.character(unlist(v$path)),
      layer = as.character(unlist(v$layer)),
      bytes = as.numeric(unlist(v$bytes)),
      stringsAsFactors = FALSE
    ),
    layers = data.frame(
      layer = as.character(unlist(l$layer)),
      bytes = as.numeric(unlist(l$bytes)),
      stringsAsFactors = FALSE
    )
  )
}
