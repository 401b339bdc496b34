#' The search's cache of compiled figures
#'
#' [search_layout()] keeps what each of its compiles measured (memory,
#' FLOPs, collectives and the compiled schedule, per layout, remat choice
#' and depth) on disk, so that a repeated or slightly changed search
#' compiles only what it has not seen. An entry is found again only for
#' the same model structure, shapes and dtype policy, layout, mesh,
#' levers, batch, optimizer, loss, compiler and versions of kerasmesh,
#' Keras, JAX and jaxlib; nothing else is trusted. The cache holds at
#' most 2 GB: the entries read least recently go first. A cache that
#' can't be written, is full or holds an unreadable entry never stops a
#' search: the search says so once (its `cache` element) and goes on
#' without it, and an unreadable entry is removed.
#'
#' `search_cache_dir()` is where it lives: the option
#' `kerasmesh.cache_dir` when set, else
#' `tools::R_user_dir("kerasmesh", "cache")`. `clear_search_cache()`
#' removes every entry.
#'
#' @param dir The cache directory.
#' @return `search_cache_dir()`: the directory (a string).
#'   `clear_search_cache()`: the number of entries removed, invisibly.
#' @seealso [search_layout()], whose `cache` argument turns the cache off
#'   or points it elsewhere.
#' @export
#' @examples
#' search_cache_dir()
#' # Clear a cache of your own (here an empty one).
#' dir <- tempfile("kerasmesh-cache-")
#' clear_search_cache(dir)
search_cache_dir <- function(...) {
  check_dots_none()
  dir <- getOption("kerasmesh.cache_dir")
  if (is.null(dir)) {
    return(tools::R_user_dir("kerasmesh", "cache"))
  }
  if (!rlang::is_string(dir) || !nzchar(dir)) {
    stop_input_type(dir, "a directory", kind = kinds$argument,
                    arg = "getOption(\"kerasmesh.cache_dir\")")
  }
  check_not_a_file(dir, 'getOption("kerasmesh.cache_dir")')
}

# A directory, or a path to make one at: not an existing file.
check_not_a_file <- function(dir, arg, call = rlang::caller_env()) {
  dir <- path.expand(dir)
  if (file.exists(dir) && !dir.exists(dir)) {
    kerasmesh_abort(
      c("{.code {arg}} must be a directory.",
        x = "Received {.path {dir}}, a file."),
      kind = kinds$argument, call = call
    )
  }
  dir
}

#' @param ... Must be empty.
#' @rdname search_cache_dir
#' @export
clear_search_cache <- function(dir = search_cache_dir(), ...) {
  check_dots_none()
  check_string(dir)
  removed <- as.integer(shim_call("cache.clear_search_cache",
                                  directory = path.expand(dir)))
  cli::cli_inform(
    c(v = "Removed {removed} cache entr{?y/ies} from {.path {dir}}."),
    class = "kerasmesh_message_search_cache"
  )
  invisible(removed)
}
