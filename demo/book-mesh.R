# Deep Learning with R (3rd ed.), section 18.2.2: 8 devices as a 2 x 4 mesh,
# 2 along "data" and 4 along "model", on simulated CPU devices.
library(kerasmesh)
simulate_devices(8)
keras <- reticulate::import("keras")

cat("== The device mesh\n")
mesh <- device_mesh(c(data = 2, model = 4))
print(mesh)

cat("\n== The model's variable paths\n")
build_model <- function() {
  keras$utils$set_random_seed(42L)
  inputs <- keras$Input(shape = list(128L))
  hidden <- keras$layers$Dense(256L, activation = "relu",
                               name = "dense_hidden")(inputs)
  outputs <- keras$layers$Dense(16L, activation = "softmax",
                                name = "dense_output")(hidden)
  keras$Model(inputs, outputs)
}
paths <- vapply(build_model()$variables, function(v) v$path, "")
writeLines(paste0("  ", paths))

cat("\n== The layout map: Dense kernels and biases split over \"model\"\n")
lm <- layout_map(
  mesh,
  ".*dense.*kernel" = c(NA, "model"),
  ".*dense.*bias" = "model"
)
print(lm)

cat("\n== Model parallel: two copies of the model, each over four devices\n")
distribution <- model_parallel(lm, batch_dim_name = "data")
print(distribution)
set_distribution(distribution)
model <- build_model()
model$compile(optimizer = "adam", loss = "categorical_crossentropy")

kernel <- model$layers[[2]]$kernel
cat("\nThe first kernel's actual sharding:",
    variable_sharding(model)$spec[[1]], "\n")
cat("JAX's own repr:", kernel$value$sharding$spec$`__repr__`(), "\n\n")

cat("== Training a few steps\n")
set.seed(1)
n <- 256
x <- matrix(rnorm(n * 128), n)
labels <- sample(0:15, n, replace = TRUE)
y <- diag(16)[labels + 1, ]
history <- model$fit(numpy_array(x), numpy_array(y), epochs = 3L,
                     batch_size = 32L, verbose = 0L)
losses <- unlist(history$history$loss)
cat(sprintf("  epoch %d: loss %.4f\n", seq_along(losses), losses), sep = "")

cat("\n== Where each variable lives after training\n")
print(variable_sharding(model))
set_distribution(NULL)
