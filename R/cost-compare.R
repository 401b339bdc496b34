#' Compare layouts by what one training step costs
#'
#' Runs [layout_cost()] for each distribution and puts the results side by
#' side: memory per device and the bytes each device sends over each mesh
#' axis per step, and whether each fits a device's memory.
#'
#' @section The timeout:
#' `timeout` counts from the call, for the whole comparison: the model is
#' built once and every distribution compiled in turn within it (see
#' [layout_cost()] for what stops at the deadline). Its default, 600
#' seconds, is [layout_cost()]'s 300 for one compile doubled: a comparison
#' compiles several steps, and a large model's compile takes a minute or
#' more on a laptop, so the default leaves room for a handful of them.
#'
#' @inheritParams layout_cost
#' @param distributions A named list of distributions ([data_parallel()],
#'   [model_parallel()]).
#' @param ... Must be empty.
#' @param memory The memory of one device: bytes, or a string such as
#'   `"80GB"` or `"16 GiB"`; `NULL` to leave out the `fits` column. A
#'   layout fits when its step needs at most `memory` per device by XLA's
#'   total (column `need`).
#' @param timeout Seconds the whole comparison may take (see below).
#' @param layouts,device_memory Deprecated: use `distributions` and
#'   `memory`.
#' @return A `kerasmesh_layout_comparison`: a data frame with one row per
#'   layout and columns `layout`, `mesh`, `weights`, `optimizer`, `inputs`,
#'   `activations`, `outputs`, `total` (bytes per device), `traffic` (bytes
#'   per device per step, all collectives), `collectives` (their count),
#'   `compile_seconds`, `need` (XLA's total per device, which decides
#'   `fits`), with `memory` `fits`, and with `topology` `time` (modeled
#'   seconds per global batch: see [layout_cost()]). An error costing one
#'   layout names the layout (by name and position) and keeps the class of
#'   the error it wraps, which is its `parent`; a layout that is not a
#'   distribution is an error before any layout is costed. Attribute
#'   `traffic` holds the traffic per layout, mesh axis and collective, and
#'   `costs` the [layout_cost()] results. Rows subset keep the class;
#'   comparisons bound with `rbind()` are plain data frames.
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
#' distributions <- list(data_parallel = data_parallel(),
#'                       model_parallel = model_parallel(lm))
#' cmp <- compare_layouts(build, distributions, batch_size = 16,
#'                        optimizer = "adam", loss = "mse", memory = "1MB")
#' cmp
#' plot(cmp)
compare_layouts <- function(model, distributions, batch_size,
                            optimizer = NULL, loss = NULL,
                            input_shapes = NULL, remat = NULL,
                            accumulation_steps = NULL, ..., memory = NULL,
                            topology = NULL, timeout = 600,
                            layouts = deprecated(),
                            device_memory = deprecated()) {
  check_dots_none()
  call <- rlang::current_env()
  started <- elapsed_seconds()
  check_supplied(c(distributions = missing(distributions) &&
                     missing(layouts)))
  distributions_arg <- typed_name("distributions", "layouts")
  distributions <- renamed_arg("distributions", "layouts")
  memory_arg <- typed_name("memory", "device_memory")
  memory <- renamed_arg("memory", "device_memory")
  distributions <- check_distributions(
    distributions, arg = distributions_arg, call = call
  )
  check_plan_model(model, arg = "model", call = call)
  memory <- check_bytes(memory, arg = memory_arg)
  batch_size <- check_whole(batch_size)
  levers <- check_cost_levers(remat, accumulation_steps, batch_size, call)
  machine <- check_topology(topology, call = call)
  step <- check_step_settings(optimizer, loss, input_shapes, timeout, call)
  costs <- cost_layouts(model, distributions, batch_size, step, started,
                        call, machine, levers = levers)
  costs <- lapply(costs, function(c) {
    c$topology <- topology
    stamp_fields(c)
  })
  new_layout_comparison(costs, memory)
}

# A named list of distributions, each as the Keras distribution.
check_distributions <- function(x, arg = rlang::caller_arg(x),
                                call = rlang::caller_env()) {
  force(arg)
  repeated <- setdiff(names(x)[duplicated(names(x))], c("", NA))
  if (is.list(x) && length(repeated)) {
    kerasmesh_abort(c("{.arg {arg}} must have unique names.",
                      x = "Received {.val {repeated}} more than once."),
                    kind = kinds$argument, call = call)
  }
  if (!is.list(x) || inherits(x, "kerasmesh_object") ||
      length(x) == 0 || is.null(names(x)) ||
      anyNA(names(x)) || any(!nzchar(names(x))) ||
      anyDuplicated(names(x))) {
    stop_input_type(
      x, "a list of distributions with unique names",
      show_value = FALSE,
      way_out = "For example {.code list(dp = data_parallel(),
             mp = model_parallel(lm))}.",
      arg = arg, call = call
    )
  }
  for (name in names(x)) {
    x[[name]] <- check_distribution(x[[name]], allow_null = FALSE,
                                    arg = paste0(arg, "$", name), call = call)
  }
  x
}

# Every layout of compare_layouts() in one shim call: the model is built
# once and the compiles run in one Python loop (the loop search_layout()'s
# shim reuses). An error costing one layout names it (its kerasmesh classes
# kept, with the original as the parent).
cost_layouts <- function(model, layouts, batch_size, step, started, call,
                         topology = NULL,
                         levers = list()) {
  timeout <- step$timeout
  results <- with_plan_model(model, function(m) {
    shim_call("compare.layout_costs", model = m,
              distributions = unname(layouts), batch_size = batch_size,
              optimizer = step$optimizer, loss = step$loss,
              input_shapes = step$input_shapes, timeout = timeout,
              spent = elapsed_seconds() - started, remat = levers$remat,
              accumulation_steps = levers$accumulation_steps,
              topology = topology, call = call)
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

# A comparison as new_layout_comparison() makes it: one edited by hand
# (`cmp$total <- NULL`, its "traffic" attribute dropped) is refused where
# it prints or plots, naming what is missing.
check_comparison_object <- function(x, call = rlang::caller_env()) {
  columns <- c("weights", "optimizer", "inputs", "activations", "outputs",
               "total", "traffic", "need")
  ok <- c(
    layout = is.character(x$layout), mesh = is.character(x$mesh),
    vapply(columns, function(col) is.numeric(x[[col]]), TRUE),
    "attr(x, \"traffic\")" = is.data.frame(attr(x, "traffic"))
  )
  check_fields(x, ok, "what {.fn compare_layouts} returns",
               way_out = "Compare the layouts again with
                          {.fn compare_layouts}.", call = call)
}

new_layout_comparison <- function(costs, memory = NULL) {
  part_of <- function(part) vapply(costs, function(c) c$memory[[part]], 1)
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
    df[[part]] <- part_of(part)
  }
  df$traffic <- vapply(costs, function(c) sum(c$collectives$bytes), 1)
  df$collectives <- vapply(costs, function(c) sum(c$collectives$count), 1L)
  df$compile_seconds <- vapply(costs, function(c) c$compile_seconds, 1)
  df$need <- vapply(costs, function(c) c$need, 1)
  df$fits <- fits_memory(df$need, memory)
  if (all(vapply(costs, function(c) !is.null(c$time), TRUE))) {
    df$time <- vapply(costs, function(c) c$time$total, 1)
  }
  rownames(df) <- NULL
  traffic <- do.call(rbind, c(
    list(data.frame(layout = character(), axes = character(),
                    collective = character(), count = integer(),
                    bytes = numeric(), stringsAsFactors = FALSE)),
    lapply(names(costs), function(n) {
      col <- costs[[n]]$collectives
      if (nrow(col) == 0) return(NULL)
      cbind(data.frame(layout = n, stringsAsFactors = FALSE),
            col[, c("axes", "collective", "count", "bytes")])
    })
  ))
  rownames(traffic) <- NULL
  stamp_fields(structure(
    df,
    traffic = traffic,
    costs = costs,
    memory = memory,
    model = costs[[1]]$plan$model,
    batch_size = costs[[1]]$batch_size,
    class = c("kerasmesh_layout_comparison", "data.frame")
  ))
}
