test_that("the snapshot links files, keeps links, and restores in place", {
  dir <- withr::local_tempdir()
  venv <- file.path(dir, "env")
  dir.create(file.path(venv, "lib", "site"), recursive = TRUE)
  writeLines("old", file.path(venv, "lib", "site", "a.py"))
  file.symlink("lib", file.path(venv, "lib64"))
  backup <- kerasmesh:::venv_snapshot(venv)
  expect_identical(Sys.readlink(file.path(backup, "lib64")), "lib")
  expect_identical(file.info(file.path(backup, "lib", "site", "a.py"))$size,
                   file.info(file.path(venv, "lib", "site", "a.py"))$size)
  # As pip does: unlink, then write anew; and a file more.
  unlink(file.path(venv, "lib", "site", "a.py"))
  writeLines("new", file.path(venv, "lib", "site", "a.py"))
  writeLines("half", file.path(venv, "lib", "site", "b.py"))
  kerasmesh:::venv_restore(venv, backup, done = FALSE)
  expect_identical(readLines(file.path(venv, "lib", "site", "a.py")), "old")
  expect_false(file.exists(file.path(venv, "lib", "site", "b.py")))
  expect_identical(dir(dir, all.files = TRUE, no.. = TRUE), "env")
  # After a success the snapshot goes and the environment stays.
  backup <- kerasmesh:::venv_snapshot(venv)
  kerasmesh:::venv_restore(venv, backup, done = TRUE)
  expect_identical(dir(dir, all.files = TRUE, no.. = TRUE), "env")
  expect_identical(readLines(file.path(venv, "lib", "site", "a.py")), "old")
})
