# Runs one worker of launch_local(): calls the function saved in the job
# file (args[1]) and saves list(value =) or list(error =) to args[2].
args <- commandArgs(trailingOnly = TRUE)
job <- readRDS(args[1])
result <- tryCatch(
  list(value = do.call(job$fun, job$args)),
  error = function(e) list(error = e)
)
saved <- tryCatch(
  {
    saveRDS(result, args[2])
    TRUE
  },
  error = function(e) {
    # A value that cannot be saved (an external pointer's meaning, say).
    saveRDS(list(error = simpleError(paste(
      "The worker's value can't be saved:", conditionMessage(e)
    ))), args[2])
    FALSE
  }
)
if (!is.null(result$error) || !saved) {
  if (!is.null(result$error)) {
    message("Error: ", conditionMessage(result$error))
  }
  quit(save = "no", status = 1)
}
# Done: every process leaves the run together, so none reports another
# gone. (A failed one exits at once, above: launch_local() stops the rest.)
if ("kerasmesh" %in% loadedNamespaces()) {
  invisible(tryCatch(kerasmesh::distributed_shutdown(),
                     error = function(e) NULL))
}
