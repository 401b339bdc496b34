# How kerasmesh objects display in Jupyter: repr's generics, which IRkernel
# calls for each MIME type, give format() as text and a <pre> of it as
# HTML, and nothing of repr's data-frame methods. Pure R, from fixtures.
# (tests/testthat/test-notebook.R runs a real notebook.)

# One object of every printed class, built from the saved descriptions.
repr_fixtures <- function() {
  launch <- kerasmesh:::new_launch(
    list(list(id = 0, pid = 101, status = "ok", exit_status = 0,
              value = 1, error = NULL, output_lines = "done")),
    "127.0.0.1:23456", timeout = 60, elapsed = 2.4
  )
  plan <- fixture_plan()
  list(
    mesh = fixture_mesh(), layout_map = fixture_layout_map(),
    distribution = fixture_distribution(), plan = plan,
    plan_summary = summary(plan), fix = layout_fix(plan),
    empty_fix = layout_fix(fixture_plan("plan-no-parameters")),
    sharding = fixture_sharding(), picture = fixture_picture(),
    cost = fixture_cost(), comparison = fixture_comparison("16GB"),
    cost_traffic = summary(fixture_cost(), by = "layer"),
    checkpoint_info = fixture_checkpoint_info(), launch = launch,
    search = fixture_search(),
    topology = device_topology("h100-sxm-80gb", nodes = 2)
  )
}

test_that("every class with a format() method has repr methods", {
  methods <- getNamespaceInfo("kerasmesh", "S3methods")
  formatted <- methods[methods[, 1] == "format", 2]
  objects <- repr_fixtures()
  # Every formatted class has a fixture...
  for (class in formatted) {
    expect_true(any(vapply(objects, inherits, TRUE, class)), info = class)
  }
  # ...and each of them inherits a class with repr methods.
  for (x in objects) {
    expect_true(inherits(x, kerasmesh:::repr_classes), info = class(x)[1])
  }
})

test_that("the methods are registered when repr loads after kerasmesh", {
  skip_if_not_installed("repr")
  skip_if_not_installed("callr")
  got <- callr::r(function(path) {
    loadNamespace("kerasmesh")
    before <- isNamespaceLoaded("repr")
    plan <- kerasmesh:::new_layout_plan(readRDS(path))
    list(before = before, html = repr::repr_html(plan),
         latex = repr::repr_latex(plan))
  }, args = list(path = test_path("fixtures", "plan-book.rds")), timeout = 30)
  expect_false(got$before)
  expect_match(got$html, "<pre class=\"kerasmesh\">&lt;kerasmesh_layout_plan",
               fixed = TRUE)
  expect_null(got$latex)
})

test_that("every kerasmesh object shows as its format(), never a table", {
  skip_if_not_installed("repr")
  loadNamespace("repr")
  for (x in repr_fixtures()) {
    text <- paste(format(x), collapse = "\n")
    expect_identical(repr::repr_text(x), text, info = class(x)[1])
    expect_null(repr::repr_markdown(x))
    expect_null(repr::repr_latex(x))
    html <- repr::repr_html(x)
    expect_match(html, "^<pre class=\"kerasmesh\">.*</pre>$")
    # Not repr's data-frame table, whatever the object is underneath.
    expect_no_match(html, "<table", fixed = TRUE)
  }
})

test_that("the HTML is the text, escaped, without ANSI styles", {
  html <- kerasmesh:::repr_pre_html(fixture_plan())
  expect_match(html, "&lt;kerasmesh_layout_plan&gt;", fixed = TRUE)
  expect_no_match(html, "<kerasmesh_layout_plan>", fixed = TRUE)
  styled <- structure("\033[1m<b> & c\033[22m", class = "kerasmesh_layout_fix")
  expect_identical(kerasmesh:::repr_pre_html(styled),
                   "<pre class=\"kerasmesh\">&lt;b&gt; &amp; c</pre>")
})

test_that("layout_fix()'s format() is what it prints", {
  plan <- fixture_plan("plan-errors")
  expect_gt(length(layout_fix(plan)), 0)
  expect_identical(format(layout_fix(plan)), unclass(layout_fix(plan)))
  empty <- layout_fix(fixture_plan("plan-no-parameters"))
  expect_identical(format(empty), "# Nothing to fix.")
  expect_output(print(empty), "# Nothing to fix.", fixed = TRUE)
})
