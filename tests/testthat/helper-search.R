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
