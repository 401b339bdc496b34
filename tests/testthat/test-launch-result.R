# launch_local()'s result, built from fake workers with new_launch(): pure
# R, no processes and no Python.

fake_workers <- function() {
  list(
    list(id = 0, pid = 101, status = "ok", exit_status = 0,
         value = list(loss = 0.5, step = 3), error = NULL,
         output_lines = c("training", "done")),
    list(id = 1, pid = 102, status = "error", exit_status = 1, value = NULL,
         error = simpleError("Shapes don't match.\nDetails below."),
         output_lines = c(
           "W1130 16:04:02.123456   1234 coordination_service.cc:12] wait",
           paste0("line ", 1:7)
         )),
    list(id = 2, pid = 103, status = "killed", exit_status = NA, value = NULL,
         error = NULL, output_lines = character())
  )
}

fake_launch <- function(verbose = TRUE) {
  kerasmesh:::new_launch(fake_workers(), "127.0.0.1:23456", timeout = 60,
                         elapsed = 2.4, verbose = verbose)
}

test_that("`$` gives a field of every worker or an attribute of the run", {
  res <- fake_launch()
  expect_identical(res$process_id, 0:2)
  expect_identical(res$pid, c(101L, 102L, 103L))
  expect_identical(res$status, c("ok", "error", "killed"))
  expect_identical(res$exit_status, c(0L, 1L, NA))
  expect_identical(res$value, list(list(loss = 0.5, step = 3), NULL, NULL))
  expect_s3_class(res$error[[2]], "simpleError")
  expect_null(res$error[[1]])
  expect_length(res$output[[2]], 8)
  expect_identical(res$coordinator_address, "127.0.0.1:23456")
  expect_identical(res$timeout, 60)
  expect_identical(res$elapsed, 2.4)
  expect_error(res$staus, 'no field "staus"',
               class = "kerasmesh_error_argument")
  expect_error(res[["staus"]], 'no field "staus"',
               class = "kerasmesh_error_argument")
})

test_that("`[[` takes a field by name and a worker by number", {
  res <- fake_launch()
  expect_identical(res[["status"]], res$status)
  w <- res[[2]]
  expect_type(w, "list")
  expect_identical(w$process_id, 1L)
  expect_identical(w$status, "error")
  expect_identical(w$exit_status, 1L)
})

test_that("`[` keeps the class and attributes of the run", {
  res <- fake_launch()
  two <- res[c(1, 3)]
  expect_s3_class(two, "kerasmesh_launch")
  expect_length(two, 2)
  expect_identical(two$process_id, c(0L, 2L))
  expect_identical(two$coordinator_address, "127.0.0.1:23456")
  expect_identical(two$elapsed, 2.4)
  expect_length(res[0], 0)
})

test_that("length() counts workers; as.data.frame() has a row per worker", {
  res <- fake_launch()
  expect_length(res, 3)
  df <- as.data.frame(res)
  expect_s3_class(df, "data.frame")
  expect_identical(nrow(df), 3L)
  expect_named(df, c("process_id", "pid", "status", "exit_status", "value",
                     "error", "output"))
  expect_identical(df$status, c("ok", "error", "killed"))
  expect_identical(df$value[[1]], list(loss = 0.5, step = 3))
  expect_identical(df$output[[1]], c("training", "done"))
})

test_that("print() shows values, first error lines and the last output", {
  res <- fake_launch()
  lines <- format(res, n = 3)
  expect_identical(lines[1:2], c(
    "<kerasmesh_launch> 3 processes at 127.0.0.1:23456 (2.4 s)",
    "Status: 1 ok, 1 error, 1 killed"
  ))
  expect_true("process 0 (pid 101): ok, exit status 0" %in% lines)
  expect_true("  value: a list of 2: loss, step" %in% lines)
  expect_true("process 1 (pid 102): error, exit status 1" %in% lines)
  expect_true("  error: Shapes don't match." %in% lines)
  expect_identical(lines[grep("^  \\| ", lines)],
                   c("  | line 5", "  | line 6", "  | line 7"))
  expect_true("process 2 (pid 103): killed, exit status ?" %in% lines)
  expect_output(out <- withVisible(print(res)), "<kerasmesh_launch> 3 proc")
  expect_identical(out, list(value = res, visible = FALSE))
})

test_that("verbose = FALSE leaves log chatter out of the output", {
  expect_length(fake_launch(verbose = TRUE)$output[[2]], 8)
  expect_identical(fake_launch(verbose = FALSE)$output[[2]],
                   paste0("line ", 1:7))
})

test_that("log chatter is dropped also when it starts inside another line", {
  gloo <- paste("[Gloo] Rank 3 is connected to 7 peer ranks.",
                "Expected number of connected peer ranks is : 7")
  absl <- paste("I1130 18:16:38.902928   11838",
                "coordination_service_agent.cc:198] Connected.")
  error <- "E1130 18:16:40.000001   11838 client.cc:12] Real trouble."
  lines <- c("before", "", paste0("value: 1", gloo), paste0(gloo, absl),
             paste0("x", error), "after", "")
  expect_identical(kerasmesh:::quiet_lines(lines),
                   c("before", "", "value: 1", "x", error, "after", ""))
  expect_identical(kerasmesh:::quiet_lines(character()), character())
})

test_that("the line end of an absl line written inside another is dropped", {
  absl <- function(thread, what) {
    sprintf("I1203 10:20:23.37%04d   %d client.cc:151] %s", thread, thread,
            what)
  }
  # Thread 1 wrote its line, thread 2 wrote a whole line inside it, then
  # thread 1 wrote its line end.
  mixed <- paste0("7\n", absl(1, "Shutdown initiated."),
                  absl(2, "Polling cancelled."), "\n\ndone\n")
  lines <- strsplit(mixed, "\n", fixed = TRUE)[[1]]
  expect_true("" %in% lines)
  expect_identical(kerasmesh:::quiet_lines(lines), c("7", "done"))
  # A blank line the program printed itself stays.
  expect_identical(kerasmesh:::quiet_lines(c("a", "", "b")), c("a", "", "b"))
})

test_that("gloo's messages are dropped when threads interleave their pieces", {
  # gloo writes "[Gloo] Rank ", the rank, " is connected to ", ... as
  # separate pieces; two threads connecting at once mix them.
  pieces <- function(rank) {
    list("[Gloo] Rank ", rank, " is connected to ", "1", " peer ranks. ",
         "Expected number of connected peer ranks is : ", "1", "\n")
  }
  a <- pieces("0")
  b <- pieces("1")
  order <- c(1, 9, 10, 2, 11, 3, 4, 12, 5, 13, 14, 6, 15, 8, 7, 16)
  mixed <- paste0("42\n", paste(unlist(c(a, b))[order], collapse = ""),
                  "done: 7\n")
  lines <- strsplit(mixed, "\n", fixed = TRUE)[[1]]
  expect_true(any(grepl("^[0-9]+$", lines[-1]))) # a stray number line
  expect_identical(kerasmesh:::quiet_lines(lines), c("42", "done: 7"))
})

# Issue 21: res[5] of two workers was a broken object.
test_that("a launch result is indexed by the workers it has", {
  res <- fake_launch()
  n <- length(res)
  for (i in list(n + 3, c(1, NA), "a", list(1), c(TRUE, FALSE, TRUE, TRUE),
                 1.5, NA, -(n + 3), c(-1, 2))) {
    expect_error(res[i], class = "kerasmesh_error_argument")
  }
  for (i in list(n + 3, 0, -1, NA, 1.5, c(1, 2))) {
    expect_error(res[[i]], class = "kerasmesh_error_argument")
  }
  expect_snapshot(res[5], error = TRUE)
  # What works keeps working.
  expect_s3_class(res[-1], "kerasmesh_launch")
  expect_length(res[-1], n - 1)
  expect_identical(res[rep(TRUE, n)]$process_id, res$process_id)
  expect_identical(res[TRUE]$process_id, res$process_id)
  expect_identical(res[]$status, res$status)
  expect_identical(res[["status"]], res$status)
  expect_true(all(nzchar(format(res[2]))))
})

test_that("a launch edited by hand is refused naming the edit", {
  res <- unclass(fake_launch())
  res[[2]]$status <- NA # an edit `[[<-` refuses, made without it
  class(res) <- "kerasmesh_launch"
  expect_error(print(res), "`x[[2]]` must be what `launch_local()` returns",
               fixed = TRUE, class = "kerasmesh_error_argument")
  expect_error(as.data.frame(res), "x[[2]]", fixed = TRUE,
               class = "kerasmesh_error_argument")
  res <- fake_launch()
  attr(res, "elapsed") <- "fast"
  expect_error(format(res), 'attr(x, "elapsed")', fixed = TRUE,
               class = "kerasmesh_error_argument")
  # A field of one's own is kept, and no worker.
  res <- fake_launch()
  res$note <- "first try"
  expect_output(print(res), "3 processes")
  expect_length(res, 3)
  expect_identical(res$note, "first try")
  expect_identical(res$status, c("ok", "error", "killed"))
  expect_identical(nrow(as.data.frame(res)), 3L)
  expect_s3_class(fake_launch()[2:3], "kerasmesh_launch")
  expect_output(print(fake_launch()[2:3]), "2 processes")
})

test_that("what a launch reported can't be set; a field of one's own can", {
  res <- fake_launch()
  for (name in c("status", "elapsed", "timeout", "coordinator_address")) {
    expect_error(res[[name]] <- "x",
                 sprintf("`x[[\"%s\"]]` can't be set", name),
                 fixed = TRUE, class = "kerasmesh_error_argument")
  }
  expect_error(res$status <- "error", "`x$status` can't be set",
               fixed = TRUE, class = "kerasmesh_error_argument")
  expect_error(res[[2]] <- res[[1]], "`x[[2]]` can't be set", fixed = TRUE,
               class = "kerasmesh_error_argument")
  expect_error(res[[1]]$mine <- 1, "`x[[1]]` can't be set", fixed = TRUE,
               class = "kerasmesh_error_argument")
  expect_error(res[2] <- list(1), "workers can't be set",
               class = "kerasmesh_error_argument")
  expect_identical(res$status, c("ok", "error", "killed"))
  expect_match(format(res)[[2]], "Status: 1 ok, 1 error, 1 killed")
  expect_error(names(res) <- c("a", "b", "c"), "names can't be set",
               class = "kerasmesh_error_argument")
  expect_error(res[c(TRUE, FALSE)], "or 3 logicals, one per worker",
               class = "kerasmesh_error_argument")
  res[["note"]] <- "kept"
  # Workers only, however they are walked.
  expect_null(names(res))
  expect_length(lapply(res, function(w) w$status), 3)
  walked <- character()
  for (w in res) walked <- c(walked, w$status)
  expect_identical(walked, c("ok", "error", "killed"))
  expect_identical(res$note, "kept")
  res$note <- "changed" # a field of one's own, no edit
  expect_match(format(res)[[2]], "Status: 1 ok")
  expect_identical(res$note, "changed")
  expect_match(format(res[0])[[2]], "Status: no process", fixed = TRUE)
})

test_that("the statuses that are nouns are counted in the plural", {
  workers <- fake_workers()
  workers[[1]]$status <- "error"
  workers[[3]]$status <- "timeout"
  res <- kerasmesh:::new_launch(workers, "127.0.0.1:23456", timeout = 60,
                                elapsed = 2.4)
  expect_match(format(res)[[2]], "Status: 2 errors, 1 timeout", fixed = TRUE)
  expect_match(format(fake_launch())[[2]], "1 ok, 1 error, 1 killed",
               fixed = TRUE)
})

test_that("a launch has no picture, and its summary takes no arguments", {
  res <- fake_launch()
  with_png(expect_error(plot(res), "no picture",
                        class = "kerasmesh_error_argument"))
  expect_error(summary(res, digits = 2), "digits",
               class = "kerasmesh_error_argument")
  expect_identical(nrow(summary(res)), 3L)
  expect_error(as.data.frame(res, strings = TRUE), "strings",
               class = "kerasmesh_error_argument")
  expect_s3_class(as.data.frame(res, stringsAsFactors = TRUE)$status,
                  "factor")
})

test_that("indexing a launch takes no other argument", {
  res <- fake_launch()
  expect_error(res[1, bogus = 1], "bogus", class = "kerasmesh_error_argument")
  expect_error(res[[1, bogus = 1]], "bogus",
               class = "kerasmesh_error_argument")
})
