# The object search_layout() returns, built from the shim's plain
# description: its tables (candidates, meshes, why, unprofiled) as data
# frames of fixed column types, whatever reticulate converted.

# The object search_layout() returns, from the shim's description: the
# found mesh (in its device order), the distribution to train with, the
# levers, and the verified cost's time and memory. `call` keeps what the
# printed code needs to reproduce the cost.
new_layout_search <- function(desc, topology = NULL, call = list()) {
  mesh <- new_device_mesh(desc$mesh)
  lm <- new_layout_map(desc$layout_map)
  desc$candidates <- search_candidates(desc$candidates)
  desc$meshes <- search_meshes(desc$meshes)
  desc$why <- search_why(desc$why)
  desc$unprofiled <- search_unprofiled(desc$unprofiled)
  if (!is.null(desc$cost)) desc$cost <- new_layout_cost(desc$cost, topology)
  desc$mesh <- NULL
  desc$layout_map <- NULL
  desc$remat <- as_remat(desc$remat)
  desc$accumulation_steps <- as.integer(desc$accumulation_steps %||% 1L)
  desc$micro_batch_size <- as.integer(desc$micro_batch_size %||% NA)
  stamp_fields(structure(
    c(list(layout_map = lm, mesh = mesh,
           distribution = model_parallel(lm, batch_dim_name =
                                           desc$batch_dim_name %||% NULL),
           time = desc$cost$time, memory = desc$cost$memory,
           topology = topology, call = call),
      desc),
    class = "kerasmesh_layout_search"
  ))
}

# A search as new_layout_search() makes it: one edited by hand
# (`search$compiles <- NULL`) is refused where it prints, plots or is
# summarised, naming the field.
check_search_object <- function(x, prefix = "x", call = rlang::caller_env()) {
  one_string <- function(v) is.character(v) && length(v) == 1 && !is.na(v)
  one_number <- function(v) is.numeric(v) && length(v) == 1 && !is.na(v)
  field <- function(name) .subset2(x, name)
  ok <- c(
    objective = one_string(field("objective")),
    method = one_string(field("method")),
    candidates = is.data.frame(field("candidates")) &&
      all(c("memory", "traffic") %in% names(field("candidates"))),
    space_size = one_number(field("space_size")),
    seconds = one_number(field("seconds")),
    compiles = one_number(field("compiles")),
    budget = is.null(field("budget")) || one_number(field("budget")),
    mesh = inherits(field("mesh"), "kerasmesh_device_mesh"),
    layout_map = inherits(field("layout_map"), "kerasmesh_layout_map"),
    cost = is.null(field("cost")) ||
      inherits(field("cost"), "kerasmesh_layout_cost"),
    topology = is.null(field("topology")) ||
      inherits(field("topology"), "kerasmesh_device_topology"),
    call = is.list(field("call"))
  )
  check_fields(x, ok, "what {.fn search_layout} returns",
               way_out = "Search again with {.fn search_layout}.",
               prefix = prefix, call = call)
}

# Fields by their exact names: `search$mesh` of a search whose `mesh` was
# removed is NULL, not its `meshes`.
#' @export
`$.kerasmesh_layout_search` <- function(x, name) .subset2(x, name)

# One row per configuration the search predicted, the best first.
search_candidates <- function(candidates) {
  column <- function(name, type, default) {
    vapply(candidates, function(c) {
      v <- c[[name]]
      if (is.null(v)) default else v
    }, type)
  }
  data.frame(
    mesh = column("mesh", "", NA_character_),
    device_order = column("device_order", "", NA_character_),
    layout = column("layout", "", NA_character_),
    remat = vapply(candidates, function(c) {
      remat_label(c$remat, quote = FALSE)
    }, ""),
    accumulation_steps = as.integer(column("accumulation_steps", 1, 1)),
    memory = column("memory", 1, NA_real_),
    traffic = column("traffic", 1, NA_real_),
    value = column("value", 1, NA_real_),
    fits = column("fits", TRUE, NA),
    rules = as.integer(column("rules", 1, NA_real_)),
    reshardings = as.integer(column("reshardings", 1, 0)),
    stringsAsFactors = FALSE
  )
}

# Why the winner won: what binds it, and per lever the best configuration
# that differs in that lever alone (a data frame, one row per lever that
# has one).
search_why <- function(why) {
  if (is.null(why)) {
    return(NULL)
  }
  levers <- Filter(Negate(is.null), why$levers)
  rivals <- search_candidates(unname(levers))
  rivals <- cbind(lever = names(levers), rivals[setdiff(
    names(rivals), c("traffic", "rules", "reshardings")
  )], ratio = vapply(levers, function(l) l$ratio %||% NA_real_, 1),
  stringsAsFactors = FALSE)
  rownames(rivals) <- NULL
  faster <- if (!is.null(why$faster)) {
    f <- search_candidates(list(why$faster))
    f$ratio <- why$faster$ratio %||% NA_real_
    f
  }
  list(binds = why$binds, faster = faster, levers = rivals)
}

# What the profile left out when the time ran out: mesh, layout, remat.
search_unprofiled <- function(unprofiled) {
  data.frame(
    mesh = vapply(unprofiled, function(u) u$mesh, ""),
    layout = vapply(unprofiled, function(u) u$layout, ""),
    remat = vapply(unprofiled, function(u) {
      remat_label(u$remat, quote = FALSE)
    }, ""),
    stringsAsFactors = FALSE
  )
}

search_meshes <- function(meshes) {
  num <- function(v) if (is.null(v)) NA_real_ else as.numeric(v)
  data.frame(
    mesh = vapply(meshes, function(m) m$mesh, ""),
    data = vapply(meshes, function(m) as.integer(m$shape[[1]]), 1L),
    model = vapply(meshes, function(m) as.integer(m$shape[[2]]), 1L),
    orders = vapply(meshes, function(m) {
      paste(unlist(m$orders), collapse = ", ")
    }, ""),
    costed = vapply(meshes, function(m) as.integer(m$costed), 1L),
    pruned = vapply(meshes, function(m) as.integer(m$pruned), 1L),
    fits = vapply(meshes, function(m) isTRUE(m$fits), TRUE),
    memory = vapply(meshes, function(m) num(m$memory), 1),
    value = vapply(meshes, function(m) num(m$value), 1),
    stringsAsFactors = FALSE
  )
}
