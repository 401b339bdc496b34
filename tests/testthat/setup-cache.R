# The searches of the tests keep their figures in a cache of their own,
# never in the user's cache directory.
withr::local_options(
  kerasmesh.cache_dir = tempfile("kerasmesh-cache-"),
  .local_envir = testthat::teardown_env()
)
