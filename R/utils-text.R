# Small text helpers shared by the format() methods.

# A count and its noun, made plural by cli: "1 rule", "12,345 errors".
# `count` is how the number is written.
count_text <- function(n, noun, count = plan_count(n)) {
  cli::pluralize("{count} {noun}{cli::qty(n)}{?s}")
}

# How many ways a batch is split: "1 way", "4 ways", "? ways" when unknown.
ways_text <- function(n) {
  if (is.null(n) || is.na(n)) "? ways" else count_text(n, "way", format(n))
}
