# The layout plan object: built from the shim's description, checked where
# it is used after editing by hand, and its data-frame behaviour (subsets
# and rows bound are plain data frames).

new_layout_plan <- function(desc) {
  cols <- desc$variables
  df <- data.frame(path = plan_chr(cols$path), stringsAsFactors = FALSE)
  df$shape <- lapply(cols$shape, whole_numbers)
  df$dtype <- plan_chr(cols$dtype)
  df$trainable <- as.logical(unlist(cols$trainable))
  df$rule <- plan_chr(cols$rule)
  df$axes <- lapply(cols$axes, axes_from_python)
  df$shard_shape <- lapply(cols$shard_shape, whole_numbers)
  df$copies <- as.integer(unlist(cols$copies))
  df$bytes <- as.numeric(unlist(cols$bytes))
  df$device_bytes <- as.numeric(unlist(cols$device_bytes))
  df$problem <- plan_chr(cols$problem)
  if (length(cols$path) == 0) {
    df <- df[0, , drop = FALSE]
  }
  summary <- desc$summary
  summary$unmatched <- as.character(unlist(summary$unmatched))
  summary$dtypes <- as.character(unlist(summary$dtypes))
  rules <- data.frame(key = plan_chr(desc$rules$key), stringsAsFactors = FALSE)
  rules$axes <- lapply(desc$rules$axes, axes_from_python)
  rules$variables <- as.integer(unlist(desc$rules$variables))
  if (length(desc$rules$key) == 0) {
    rules <- rules[0, , drop = FALSE]
  }
  attr(df, "summary") <- summary
  attr(df, "problems") <- new_plan_problems(desc$problems)
  attr(df, "groups") <- new_plan_groups(desc$groups)
  attr(df, "outputs") <- new_plan_outputs(desc$outputs)
  attr(df, "rules") <- rules
  attr(df, "mesh") <- new_device_mesh(desc$mesh)
  class(df) <- c("kerasmesh_layout_plan", "data.frame")
  stamp_fields(df)
}

# A plan as new_layout_plan() makes it: one edited by hand (a column
# removed, an attribute dropped) is refused where it prints, plots, is
# summarised, checked or pictured, naming what is missing.
check_plan_object <- function(x, prefix = "x", call = rlang::caller_env()) {
  dims <- function(v) is.list(v) && all(vapply(v, is.numeric, TRUE))
  columns <- list(path = is.character, shape = dims, dtype = is.character,
                  trainable = is.logical, rule = is.character,
                  axes = is.list, shard_shape = dims, copies = is.numeric,
                  bytes = is.numeric, device_bytes = is.numeric,
                  problem = is.character)
  attribute <- function(name) attr(x, name, exact = TRUE)
  ok <- c(
    vapply(names(columns), function(col) {
      columns[[col]](.subset2(x, col))
    }, TRUE),
    "attr(x, \"summary\")" = is.list(attribute("summary")) &&
      !is.null(attribute("summary")$model),
    "attr(x, \"mesh\")" = inherits(attribute("mesh"),
                                    "kerasmesh_device_mesh"),
    "attr(x, \"problems\")" = is.data.frame(attribute("problems")),
    "attr(x, \"groups\")" = is.data.frame(attribute("groups"))
  )
  check_fields(x, ok, "what {.fn layout_plan} returns",
               way_out = "Plan the layout again with {.fn layout_plan}
                          (subsets such as {.code plan[1, ]} are plain data
                          frames).", prefix = prefix, call = call)
}

plan_chr <- function(x) {
  if (is.character(x)) {
    return(x)
  }
  vapply(x, function(e) if (is.null(e)) NA_character_ else as.character(e),
         character(1), USE.NAMES = FALSE)
}

# Subsets are plain data frames: the plan's totals describe all its rows.
#' @export
`[.kerasmesh_layout_plan` <- function(x, ...) {
  check_subset_names()
  out <- NextMethod()
  if (is.data.frame(out)) plain_frame(out) else out
}
