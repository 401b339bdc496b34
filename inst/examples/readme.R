library(kerasmesh)
simulate_devices(8)                       # 8 CPU devices, before JAX starts

mesh <- device_mesh(c(data = 2, model = 4))
mesh
#> <kerasmesh_device_mesh> 2 × 4 (data × model), 8 cpu devices
#>          model[0] model[1] model[2] model[3]
#> data[0]  cpu:0    cpu:1    cpu:2    cpu:3
#> data[1]  cpu:4    cpu:5    cpu:6    cpu:7

lm <- layout_map(mesh, ".*dense.*kernel" = c(NA, "model"),
                 ".*dense.*bias" = "model")
dist <- model_parallel(lm, batch_dim_name = "data")

keras <- reticulate::import("keras")
model <- with_distribution(dist, {
  keras$Sequential(list(keras$Input(shape = list(128L)),
                        keras$layers$Dense(256L, name = "dense")))
})
variable_sharding(model)        # where each weight lives, read from JAX
