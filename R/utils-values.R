# Values on their way to and from the shim: plain R vectors, converted
# where R and Python differ (NA and None, R's integer range).

# An R vector as a list for Python, with NA as None.
na_to_null <- function(x) {
  out <- as.list(x)
  out[is.na(x)] <- list(NULL)
  out
}

# Sizes from Python as integers, or doubles when they overflow R's integers.
whole_numbers <- function(x) {
  x <- as.numeric(unlist(x))
  if (all(x <= .Machine$integer.max)) as.integer(x) else x
}
