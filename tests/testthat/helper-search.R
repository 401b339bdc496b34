# The searches of test-search.R and test-search-format.R: one Dense kernel
# (7 layouts, the bias pinned), costed in seconds.
search_net <- function() {
  keras <- reticulate::import("keras")
  keras$Sequential(list(keras$Input(shape = list(32L)),
                        keras$layers$Dense(64L, name = "dense")),
                   name = "net")
}

small_search <- function(batch_size = 16, ...) {
  mesh <- device_mesh(c(data = 2, model = 4))
  search_layout(search_net, mesh, batch_size = batch_size, loss = "mse",
                fixed = layout_map(mesh, "net/dense/bias" = NA), ...)
}

# A search on two nodes of four H100s (the 8 simulated devices): the
# search chooses the mesh among 8 x 1, 4 x 2, 2 x 4 and 1 x 8.
topology_search <- function(...) {
  topo <- device_topology("h100-sxm-80gb", nodes = 2, devices_per_node = 4)
  mesh <- device_mesh(c(data = 2, model = 4))
  search_layout(search_net, topo, batch_size = 16, loss = "mse",
                optimizer = "adam",
                fixed = layout_map(mesh, "net/dense/bias" = NA), ...)
}
