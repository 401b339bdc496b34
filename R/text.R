# Small text helpers shared by the format() methods.

# A count and its noun, made plural by cli: "1 rule", "12,345 errors".
# `count` is how the number is written.
count_text <- function(n, noun, count = plan_count(n)) {
  cli::pluralize("{count} {noun}{cli::qty(n)}{?s}")
}
