#' Compare layouts by what one training step costs
#'
#' Runs [layout_cost()] for each distribution and puts the results side by
#' side: memory per device and the bytes each device sends over each mesh
#' axis per step, and whether each fits a device's memory.
#'
#' @inheritParams layout_cost
#' @param layouts A named list of distributions ([data_parallel()],
#'   [model_parallel()]).
#' @param ... Passed to [layout_cost()]: `optimizer`, `loss`,
#'   `input_shapes`, `timeout`. `timeout` is for the whole comparison,
#'   from the call. An error costing one layout names the layout (by name
#'   and position) and keeps the class of the error it wraps, which is its
#'   `parent`; a layout that is not a distribution is an error before any
#'   layout is costed.
#' @param device_memory The memory of one device: bytes, or a string such
#'   as `"80GB"` or `"16 GiB"`; `NULL` to leave out the `fits` column.
#' @return A `kerasmesh_layout_comparison`: a data frame with one row per
#'   layout and columns `layout`, `mesh`, `weights`, `optimizer`, `inputs`,
#'   `activations`, `outputs`, `total` (bytes per device), `traffic` (bytes
#'   per device per step, all collectives), `collectives` (their count),
#'   `compile_seconds` and, with `device_memory`, `fits`. Attribute
#'   `traffic` holds the traffic per layout, mesh axis and kind, and
#'   `costs` the [layout_cost()] results.
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
#' layouts <- list(data_parallel = data_parallel(),
#'                 model_parallel = model_parallel(lm))
#' cmp <- compare_layouts(build, layouts, batch_size = 16,
#'                        optimizer = "adam", loss = "mse",
#'                        device_memory = "1MB")
#' cmp
#' plot(cmp)
compare_layouts <- function(model, layouts, batch_size, ...,
                            device_memory = NULL) {
  call <- rlang::current_env()
  if (!is.list(layouts) || inherits(layouts, "kerasmesh_object") ||
      length(layouts) == 0 || is.null(names(layouts)) ||
      anyNA(names(layouts)) || any(!nzchar(names(layouts))) ||
      anyDuplicated(names(layouts))) {
    stop_input_type(
      layouts, "a list of distributions with unique names",
      show_value = FALSE,
      way_out = "For example {.code list(dp = data_parallel(),
             mp = model_parallel(lm))}.",
      call = call
    )
  }
  check_plan_model(model, arg = "model", call = call)
  limit <- check_bytes(device_memory)
  batch_size <- check_whole(batch_size)
  started <- elapsed_seconds()
  for (name in names(layouts)) {
    layouts[[name]] <- cost_distribution_arg(
      layouts[[name]], arg = paste0("layouts$", name), call = call
    )
  }
  costs <- cost_layouts(model, layouts, batch_size, started, call, ...)
  new_layout_comparison(costs, limit)
}

# Every layout of compare_layouts() in one shim call: the model is built
# once and the compiles run in one Python loop (the loop search_layout()'s
# shim reuses). An error costing one layout names it (its kerasmesh classes
# kept, with the original as the parent).
cost_layouts <- function(model, layouts, batch_size, started, call,
                         optimizer = NULL, loss = NULL, input_shapes = NULL,
                         timeout = 300, ...) {
  check_dots_none(call = call)
  step <- cost_step_args(optimizer, loss, input_shapes, timeout, call)
  timeout <- step$timeout
  results <- with_plan_model(model, function(m) {
    shim_call("compare.layout_costs", model = m,
              distributions = unname(layouts), batch_size = batch_size,
              optimizer = step$optimizer, loss = step$loss,
              input_shapes = step$input_shapes, timeout = timeout,
              spent = elapsed_seconds() - started, call = call)
  }, deadline = started + timeout, timeout = timeout, arg = "model",
  call = call)
  costs <- Map(function(result, name, i) {
    withCallingHandlers(
      signal_from_python(result, call),
      kerasmesh_error = function(e) {
        classes <- grep("^kerasmesh_error_", class(e), value = TRUE)
        kerasmesh_abort(
          "Can't cost layout {.val {name}} ({i} of {length(layouts)}).",
          kind = sub("^kerasmesh_error_", "", classes), parent = e,
          layout = name, call = call
        )
      }
    )
    new_layout_cost(result$value)
  }, results, names(layouts)[seq_along(results)], seq_along(results))
  stats::setNames(costs, names(layouts))
}

new_layout_comparison <- function(costs, limit = NULL) {
  memory <- function(part) vapply(costs, function(c) c$memory[[part]], 1)
  df <- data.frame(
    layout = names(costs),
    mesh = vapply(costs, function(c) {
      shape <- .subset2(c$mesh, "shape")
      paste(sprintf("%s=%d", names(shape), shape), collapse = ",")
    }, ""),
    stringsAsFactors = FALSE
  )
  for (part in c("weights", "optimizer", "inputs", "activations", "outputs",
                 "total")) {
    df[[part]] <- memory(part)
  }
  df$traffic <- vapply(costs, function(c) sum(c$collectives$bytes), 1)
  df$collectives <- vapply(costs, function(c) sum(c$collectives$count), 1L)
  df$compile_seconds <- vapply(costs, function(c) c$compile_seconds, 1)
  if (!is.null(limit)) {
    df$fits <- df$total <= limit
  }
  rownames(df) <- NULL
  traffic <- do.call(rbind, c(
    list(data.frame(layout = character(), axes = character(),
                    kind = character(), count = integer(),
                    bytes = numeric(), stringsAsFactors = FALSE)),
    lapply(names(costs), function(n) {
      col <- costs[[n]]$collectives
      if (nrow(col) == 0) return(NULL)
      cbind(data.frame(layout = n, stringsAsFactors = FALSE),
            col[, c("axes", "kind", "count", "bytes")])
    })
  ))
  rownames(traffic) <- NULL
  structure(
    df,
    traffic = traffic,
    costs = costs,
    device_memory = limit,
    model = costs[[1]]$plan$model,
    batch_size = costs[[1]]$batch_size,
    class = c("kerasmesh_layout_comparison", "data.frame")
  )
}
