# A worker started by a launcher (mpirun, or the variables srun or a
# Kubernetes Job set): joins with distributed_initialize() and no
# arguments, notes what JAX's own cluster detection finds, trains the MLP
# on its share when TRAIN_MLP names its file, and saves it all to
# sprintf(RESULT, process index).
library(kerasmesh)
detected <- tryCatch(
  {
    clusters <- reticulate::import("jax._src.clusters")
    found <- NULL
    for (cl in list(clusters$SlurmCluster, clusters$OmpiCluster)) {
      if (isTRUE(cl$is_env_present())) {
        found <- list(
          coordinator_address = cl$get_coordinator_address(
            NULL, if (nzchar(Sys.getenv("JAX_COORDINATOR_PORT")))
              Sys.getenv("JAX_COORDINATOR_PORT")
          ),
          num_processes = cl$get_process_count(),
          process_id = cl$get_process_id()
        )
      }
    }
    if (nzchar(Sys.getenv("JOB_COMPLETION_INDEX"))) {
      found <- list(
        coordinator_address = Sys.getenv("JAX_COORDINATOR_ADDRESS"),
        process_id = clusters$K8sCluster$get_process_id()
      )
    }
    found
  },
  error = function(e) list(error = conditionMessage(e))
)
info <- distributed_initialize(timeout = 40)
trained <- NULL
if (nzchar(Sys.getenv("TRAIN_MLP"))) {
  source(Sys.getenv("TRAIN_MLP"))
  data <- shared_data()
  trained <- train_shared_mlp(data$x, data$y)
}
result <- c(list(info = info, detected = detected), trained)
saveRDS(result, sprintf(Sys.getenv("RESULT"), info$process_index))
