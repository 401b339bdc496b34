# Small text helpers shared by the format() methods and messages: counts,
# dimensions and names shortened to a width.

# A count and its noun, made plural by cli: "1 rule", "12,345 errors".
# `count` is how the number is written.
count_text <- function(n, noun, count = format_whole(n)) {
  cli::pluralize("{count} {noun}{cli::qty(n)}{?s}")
}

# "a" or "an" before a text that starts with a number or a word, as it
# is read: "an 8 (model)", "an 11", "a 2 x 4".
a_or_an <- function(text) {
  if (grepl("^(8|11(?![0-9])|18(?![0-9])|[aeiouAEIOU])", text, perl = TRUE)) {
    "an"
  } else {
    "a"
  }
}

# How many ways a batch is split: "1 way", "4 ways", "? ways" when unknown.
ways_text <- function(n) {
  if (is.null(n) || is.na(n)) "? ways" else count_text(n, "way", format(n))
}

# 12,345: a whole number with thousands marks, never in scientific notation.
format_whole <- function(x) {
  format(x, big.mark = ",", scientific = FALSE, trim = TRUE)
}

# A count that can be astronomical (a search space's layouts): as
# format_whole() while a double counts it exactly (below 2^53), then
# "about 1.2e+100", and past a double's range "more than 1.8e+308".
format_astronomical <- function(x) {
  if (is.infinite(x)) {
    return(paste("more than", format(.Machine$double.xmax, digits = 2)))
  }
  if (x >= 2^53) {
    return(paste("about", format(signif(x, 2), scientific = TRUE)))
  }
  format_whole(x)
}

# The dimensions of a shape, "1024 x 512" (a times sign in UTF-8), "()"
# for a scalar.
format_dims <- function(shape) {
  if (length(shape) == 0) {
    return("()")
  }
  # Whole numbers in full, past R's integers too ("16×1000000000000").
  dims <- format(as.numeric(shape), scientific = FALSE, trim = TRUE)
  paste(dims, collapse = times_symbol())
}

# "2 × 4" in a UTF-8 console, "2 x 4" elsewhere.
times_symbol <- function() {
  if (cli::is_utf8_output()) "\u00d7" else "x"
}

times_to_ascii <- function(x) {
  if (cli::is_utf8_output()) x else gsub("\u00d7", "x", x, fixed = TRUE)
}

# Shortens long paths in the middle, keeping their first component and
# their end: "adam/...hidden_kernel_momentum".
truncate_left <- function(x, width) {
  long <- nchar(x) > width
  head <- sub("/.*$", "/", x[long])
  head[nchar(head) > width / 2 | head == x[long]] <- ""
  keep <- width - nchar(head) - 3
  x[long] <- paste0(head, "...", substring(x[long], nchar(x[long]) - keep + 1))
  x
}

truncate_right <- function(x, width = 72) {
  long <- nchar(x) > width
  x[long] <- paste0(substring(x[long], 1, width - 3), "...")
  x
}

# `name` as R code: as it is when syntactic, else in backquotes ("`my
# map`"), with any backquote or backslash inside escaped. Every name in
# printed code goes through it, so that the code parses.
code_name <- function(name) {
  deparse(as.name(name), backtick = TRUE)
}
