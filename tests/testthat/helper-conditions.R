# The text of the help page ?kerasmesh_conditions: the installed one, or,
# under pkgload::load_all() (testthat::test_local()), where the package has
# no help index, the source's man/kerasmesh_conditions.Rd.
conditions_page_text <- function() {
  topic <- utils::help("kerasmesh_conditions", package = "kerasmesh")
  rd <- if (length(topic) == 1) {
    utils:::.getHelpFile(topic)
  } else {
    tools::parse_Rd(system.file("man", "kerasmesh_conditions.Rd",
                                package = "kerasmesh", mustWork = TRUE))
  }
  options <- list(underline_titles = FALSE)
  paste(utils::capture.output(tools::Rd2txt(rd, options = options)),
        collapse = "\n")
}
