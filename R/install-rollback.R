# An update of a virtualenv that can be undone: a snapshot of hard links
# beside it, swapped back if pip fails half-way (install_kerasmesh()).

# A snapshot of the virtualenv at `path`, beside it: its files as hard links
# (pip replaces a file by unlinking it first, so the snapshot keeps the old
# contents), copied where links can't be made. Returns the snapshot's path.
venv_snapshot <- function(path, call = rlang::caller_env()) {
  backup <- file.path(dirname(path), paste0(
    ".", basename(path), ".kerasmesh-", Sys.getpid(), "-",
    format(as.numeric(Sys.time()) * 1e3, scientific = FALSE)
  ))
  ok <- tryCatch(link_tree(path, backup), error = function(e) FALSE)
  if (!isTRUE(ok)) {
    unlink(backup, recursive = TRUE)
    kerasmesh_abort(
      c("Can't take a snapshot of {.path {path}} to update it safely.",
        x = "Writing {.path {backup}} failed (a full disk, permissions?).",
        i = "Free some space beside the environment, or give a new
             {.arg envname}. Nothing was changed."),
      kind = kinds$install_envname, path = path, call = call
    )
  }
  backup
}

# Mirrors the tree `from` at `to`: directories made, symbolic links kept as
# links (never followed), files hard-linked or else copied. TRUE if all of
# it could be made.
link_tree <- function(from, to) {
  if (!dir.create(to, showWarnings = FALSE)) {
    return(FALSE)
  }
  names <- dir(from, all.files = TRUE, no.. = TRUE)
  src <- file.path(from, names)
  dst <- file.path(to, names)
  links <- Sys.readlink(src)
  is_link <- nzchar(links)
  is_dir <- !is_link & dir.exists(src)
  files <- !is_link & !is_dir
  ok <- logical()
  if (any(files)) {
    ok <- suppressWarnings(file.link(src[files], dst[files]))
    ok[!ok] <- file.copy(src[files][!ok], dst[files][!ok], copy.mode = TRUE,
                         copy.date = TRUE)
  }
  if (any(is_link)) {
    ok <- c(ok, suppressWarnings(file.symlink(links[is_link], dst[is_link])))
  }
  all(ok, vapply(which(is_dir), function(i) link_tree(src[i], dst[i]), TRUE))
}

# After an update: the snapshot dropped when it succeeded (`done`), else
# swapped back in place of the environment pip left half-installed.
venv_restore <- function(path, backup, done) {
  if (!done) {
    failed <- paste0(backup, "-failed")
    if (!file.rename(path, failed)) unlink(path, recursive = TRUE)
    file.rename(backup, path)
    backup <- failed
  }
  unlink(backup, recursive = TRUE)
}

# A new environment that could not be completed, removed; a directory that
# was there (empty) before stays, empty.
venv_remove <- function(path, was_dir) {
  unlink(path, recursive = TRUE)
  if (was_dir) dir.create(path, showWarnings = FALSE)
}
