# Peak memory of process_rows() against the size of its result.
#
#   Rscript bench/process_rows_memory.R [n] [batch_size] [processes]
#
# Runs process_rows(n, batch_size, 0, processes) in a fresh R process and,
# in another, the way it made rows before issue 21 (outer() over the
# batches, then as.vector() and as.integer()), and prints, for each, the
# growth of the process's peak RSS (VmHWM) over the result's size. Linux
# only (/proc/self/status). The default n is 2^28; the issue's case,
# n = .Machine$integer.max with batches of 1024 over 2 processes, needs
# 4.3 GB for the result alone (and about 22 GB the old way).

args <- commandArgs(trailingOnly = TRUE)
n <- if (length(args) >= 1) as.numeric(args[[1]]) else 2^28
batch_size <- if (length(args) >= 2) as.numeric(args[[2]]) else 1024
processes <- if (length(args) >= 3) as.numeric(args[[3]]) else 2

peak_growth <- function(n, batch_size, processes, old) {
  callr::r(function(n, batch_size, processes, old) {
    peak <- function() {
      line <- grep("^VmHWM:", readLines("/proc/self/status"), value = TRUE)
      as.numeric(gsub("[^0-9]", "", line)) * 1024
    }
    old_rows <- function(n, batch_size, process, processes) {
      share <- batch_size %/% processes
      full <- n %/% batch_size
      starts <- (seq_len(full) - 1) * batch_size
      as.integer(as.vector(outer(process * share + seq_len(share), starts,
                                 `+`)))
    }
    library(kerasmesh)
    f <- if (old) old_rows else process_rows
    invisible(f(64, 16, 0, 2)) # load what the call loads
    gc()
    before <- peak()
    rows <- f(n, batch_size, 0, processes)
    c(growth = peak() - before, result = as.numeric(utils::object.size(rows)))
  }, args = list(n = n, batch_size = batch_size, processes = processes,
                 old = old))
}

for (old in c(TRUE, FALSE)) {
  m <- peak_growth(n, batch_size, processes, old)
  cat(sprintf("%-22s result %8.1f MB, peak RSS +%8.1f MB: %.2f x the result\n",
              if (old) "before (outer())" else "process_rows()",
              m[["result"]] / 1e6, m[["growth"]] / 1e6,
              m[["growth"]] / m[["result"]]))
}
