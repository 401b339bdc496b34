# The R code a search result prints: the mesh, the layout map and the
# layout_cost() call that reproduce its verified memory and time.

search_reproduce_code <- function(x) {
  call <- x$call
  model <- call$model %||% "model"
  topology <- x$topology
  blocks <- call$blocks
  model_code <- if (is.null(blocks)) {
    code_name(model)
  } else {
    sprintf("function() %s(%s)", code_name(model), code_number(blocks))
  }
  args <- c(
    model_code,
    sprintf("model_parallel(lm, batch_dim_name = %s)",
            encodeString(x$batch_dim_name %||% mesh_axis_names(x$mesh)[[1]],
                         quote = '"')),
    sprintf("batch_size = %s",
            code_number(call$batch_size %||% x$cost$batch_size)),
    search_arg_code("optimizer", call$optimizer),
    search_arg_code("loss", call$loss),
    search_arg_code("input_shapes", call$input_shapes),
    sprintf("remat = %s", remat_code(x$remat)),
    sprintf("accumulation_steps = %d", as.integer(x$accumulation_steps)),
    if (!is.null(topology)) "topology = topo"
  )
  objects <- c(
    if (!is.character(call$optimizer) && !is.null(call$optimizer)) {
      "`optimizer`"
    },
    if (!is.character(call$loss) && !is.null(call$loss)) "`loss`"
  )
  c(
    sprintf("# To reproduce this cost (`%s`: the model searched%s):", model,
            if (length(objects)) {
              paste0("; ", paste(objects, collapse = ", "), ": as searched")
            } else {
              ""
            }),
    search_mesh_code(x$mesh),
    sub("^layout_map\\(", "lm <- layout_map(", search_code(
      as.list(x$layout_map)
    )),
    if (!is.null(topology)) paste("topo <-", topology_code(topology)),
    wrap_call("cost <- layout_cost(", args)
  )
}

# `name = value` for an argument of the call, or nothing for NULL: a
# string or a list as R code, anything else by its name.
search_arg_code <- function(name, value) {
  if (is.null(value)) {
    return(NULL)
  }
  code <- if (is.character(value) || is.list(value) && !inherits(
    value, "python.builtin.object"
  )) {
    deparse1(value)
  } else {
    name
  }
  sprintf("%s = %s", name, code)
}

# device_mesh() of a mesh, naming its devices when they are not in the
# order device_mesh() lays them out (by id, the last axis fastest).
search_mesh_code <- function(mesh) {
  shape <- mesh_shape(mesh)
  shape_code <- sprintf("c(%s)", paste(sprintf("%s = %d",
                                               vapply(names(shape), code_name,
                                                      ""),
                                               as.integer(shape)),
                                       collapse = ", "))
  grid <- .subset2(mesh, "devices")
  # Row-major, as device_mesh() reads `devices`.
  devices <- as.character(if (length(dim(grid)) > 1) {
    aperm(grid, rev(seq_along(dim(grid))))
  } else {
    grid
  })
  ids <- suppressWarnings(as.integer(sub("^.*:", "", devices)))
  in_order <- !anyNA(ids) && identical(ids, seq_along(ids) - 1L)
  if (in_order) {
    return(sprintf("mesh <- device_mesh(%s)", shape_code))
  }
  wrap_call("mesh <- device_mesh(", c(
    shape_code, sprintf("devices = c(%s)", paste(
      encodeString(devices, quote = '"'), collapse = ", "
    ))
  ))
}

# device_topology() code that makes `topology` again.
topology_code <- function(topology) {
  given <- topology$given
  if (identical(topology$name, "custom")) {
    given <- c("devices_per_node", "memory", "peak_flops",
               "intra_node_bandwidth",
               if (!is.na(topology$inter_node_bandwidth)) {
                 "inter_node_bandwidth"
               },
               if (!is.na(topology$all_reduce_bandwidth %||% NA)) {
                 "all_reduce_bandwidth"
               },
               "intra_node_latency", "inter_node_latency", "efficiency",
               if (!is.na(topology$memory_bandwidth)) "memory_bandwidth")
  }
  args <- c(
    if (!identical(topology$name, "custom")) {
      encodeString(topology$name, quote = '"')
    },
    sprintf("nodes = %s", code_number(topology$nodes)),
    vapply(given, function(g) sprintf("%s = %s", g, deparse1(topology[[g]])),
           "")
  )
  paste0("device_topology(", paste(args, collapse = ", "), ")")
}

# `head` then the arguments, as many to a line as fit in 78 columns.
wrap_call <- function(head, args, width = 78) {
  lines <- character()
  line <- "  "
  for (i in seq_along(args)) {
    piece <- paste0(args[[i]], if (i < length(args)) "," else "")
    if (nchar(line) > 2 && nchar(line) + 1 + nchar(piece) > width) {
      lines <- c(lines, line)
      line <- "  "
    }
    line <- if (nchar(line) > 2) paste(line, piece) else paste0(line, piece)
  }
  c(head, lines, line, ")")
}

# A whole number as R code: no thousands separators, no exponent.
code_number <- function(x) {
  formatC(as.numeric(x), format = "f", digits = 0, big.mark = "")
}

# `remat` as R code: one choice, or its runs over the blocks with rep().
remat_code <- function(remat) {
  runs <- remat_runs(remat)
  if (length(as_remat(remat)) == 1) {
    return(runs$values)
  }
  sprintf("rep(c(%s), c(%s))", paste(runs$values, collapse = ", "),
          paste(runs$lengths, collapse = ", "))
}
