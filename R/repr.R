# Display in Jupyter notebooks (IRkernel).
#
# IRkernel shows a value through the repr package: repr_text() for
# text/plain and, with rich display on, repr_html(), repr_markdown(),
# repr_latex() and the other repr_*() generics for the other MIME types.
# Every kerasmesh object shows as its format(): text/plain is the text
# print() writes, text/html the same text in a <pre>. Markdown and LaTeX
# are NULL (none): kerasmesh's plans, sharding reports and comparisons are
# data frames underneath, and repr's data-frame methods would otherwise
# show their raw columns. repr is not a dependency: the methods are
# registered when repr loads (see zzz.R).

# The classes of kerasmesh's printed objects; test-repr.R checks that every
# class with a format() method is here (kerasmesh_object covers meshes,
# layout maps and distributions).
repr_classes <- c(
  "kerasmesh_object", "kerasmesh_layout_plan",
  "kerasmesh_layout_plan_summary", "kerasmesh_layout_fix",
  "kerasmesh_sharding", "kerasmesh_sharding_picture",
  "kerasmesh_layout_cost", "kerasmesh_layout_comparison",
  "kerasmesh_cost_traffic", "kerasmesh_layout_search",
  "kerasmesh_checkpoint_info", "kerasmesh_launch",
  "kerasmesh_device_topology"
)

# The methods, by repr generic.
repr_methods <- function() {
  none <- function(obj, ...) NULL
  list(
    repr_text = function(obj, ...) repr_plain_text(obj),
    repr_html = function(obj, ...) repr_pre_html(obj),
    repr_markdown = none,
    repr_latex = none
  )
}

# An object's text/plain form: its format(), one string.
repr_plain_text <- function(obj) {
  paste(format(obj), collapse = "\n")
}

# An object's text/html form: its text in a <pre>, without ANSI styles,
# HTML-escaped.
repr_pre_html <- function(obj) {
  text <- cli::ansi_strip(repr_plain_text(obj))
  text <- gsub("&", "&amp;", text, fixed = TRUE)
  text <- gsub("<", "&lt;", text, fixed = TRUE)
  text <- gsub(">", "&gt;", text, fixed = TRUE)
  paste0("<pre class=\"kerasmesh\">", text, "</pre>")
}

# Registers every repr method for every class once repr is loaded.
register_repr_methods <- function() {
  methods <- repr_methods()
  for (generic in names(methods)) {
    for (class in repr_classes) {
      register_s3_method("repr", generic, class, methods[[generic]])
    }
  }
}
