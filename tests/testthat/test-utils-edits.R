# Objects edited by hand: errors that name the field changed, from saved
# descriptions (no Python).

test_that("a field changed, removed or added since the object was made", {
  cost <- fixture_cost()
  expect_identical(kerasmesh:::changed_fields(cost), character())
  copy <- cost
  copy$need <- 1
  copy$plan <- NULL
  copy$mine <- TRUE
  expect_identical(kerasmesh:::changed_fields(copy),
                   c("x$need", "x$plan", "x$mine"))
  attr(copy, "kerasmesh_fields") <- NULL
  expect_identical(kerasmesh:::changed_fields(copy), character())
  # A nested object is judged by its own fields, however Python's side of
  # it changes.
  search <- fixture_search()
  search$cost$need <- 2
  expect_identical(kerasmesh:::changed_fields(search), "x$cost")
})

# The error `f(x)` raises, with no warning on the way.
edited_error <- function(f, x) {
  expect_no_warning(
    err <- expect_error(f(x), class = "kerasmesh_error_argument")
  )
  conditionMessage(err)
}

test_that("printing an edited object names the field, never R's error", {
  plan <- fixture_plan()
  plan$device_bytes <- NA_real_
  expect_match(edited_error(format, plan), "x$device_bytes", fixed = TRUE)
  expect_match(edited_error(summary, plan), "object$device_bytes",
               fixed = TRUE)
  plan_summary <- summary(fixture_plan())
  plan_summary$device_weights <- "zz"
  expect_match(edited_error(print, plan_summary), "x$device_weights",
               fixed = TRUE)
  cost <- fixture_cost()
  cost$reshardings <- NULL
  expect_match(edited_error(format, cost), "x$reshardings", fixed = TRUE)
  search <- fixture_search()
  search$why <- "zz"
  expect_match(edited_error(format, search), "x$why", fixed = TRUE)
  picture <- fixture_picture()
  picture$path <- NULL
  expect_match(edited_error(format, picture), "x$path", fixed = TRUE)
  info <- fixture_checkpoint_info()
  info$steps <- NULL
  expect_match(edited_error(format, info), "x$steps", fixed = TRUE)
  # R's own error stays readable, as the parent.
  err <- expect_error(format(cost), class = "kerasmesh_error_argument")
  expect_false(inherits(err$parent, "kerasmesh_error"))
})

test_that("plotting an edited object names the field or attribute", {
  cmp <- fixture_comparison()
  attr(cmp, "model") <- NULL
  expect_match(with_png(edited_error(plot, cmp)), 'attr(x, "model")',
               fixed = TRUE)
  picture <- fixture_picture()
  picture$start <- NULL
  expect_match(with_png(edited_error(plot, picture)), "x$start",
               fixed = TRUE)
})

test_that("an R warning an edited object raises is that error too", {
  picture <- fixture_picture()
  picture$device_bytes <- "zz"
  attr(picture, "kerasmesh_fields") <- NULL
  picture <- as_made(picture) # the edit alone would be refused first
  expect_no_warning(kerasmesh:::with_edits_named(picture, 1))
  edited <- fixture_plan()
  edited$bytes <- c("1", "x", "2", "3")
  err <- expect_error(
    kerasmesh:::with_edits_named(edited, as.numeric(edited$bytes)),
    "x$bytes", fixed = TRUE, class = "kerasmesh_error_argument"
  )
  expect_s3_class(err$parent, "warning")
})

test_that("an unedited object's errors, and the method's own, pass as made", {
  cost <- fixture_cost()
  err <- expect_error(kerasmesh:::with_edits_named(cost, stop("a bug")),
                      "a bug")
  expect_false(inherits(err, "kerasmesh_error"))
  expect_error(with_png(plot(fixture_comparison()[0, ])),
               "at least one layout", class = "kerasmesh_error_argument")
  expect_no_error(format(fixture_comparison()[1, ]))
})

test_that("meshes, maps and distributions are refused once edited", {
  mesh <- fixture_mesh()
  mesh$shape <- c(data = 8L)
  expect_match(edited_error(format, mesh), "x$shape", fixed = TRUE)
  expect_error(layout_map(mesh, a = "model"), "mesh$shape", fixed = TRUE,
               class = "kerasmesh_error_argument")
  lm <- fixture_layout_map()
  attr(lm, "class") <- NULL
  lm$rules <- list()
  class(lm) <- c("kerasmesh_layout_map", "kerasmesh_object")
  expect_match(edited_error(format, lm), "x$rules", fixed = TRUE)
  dist <- fixture_distribution()
  dist$batch_dim_name <- "model"
  expect_error(kerasmesh:::check_distribution(dist, arg = "d"),
               "d$batch_dim_name", fixed = TRUE,
               class = "kerasmesh_error_argument")
})

test_that("`$<-` and `names<-` on a layout map say how rules are set", {
  lm <- fixture_layout_map()
  expect_error(lm$a <- "data", 'lm[["a"]]', fixed = TRUE,
               class = "kerasmesh_error_layout_key")
  expect_error(names(lm) <- c("a", "b"), "names<-", fixed = TRUE,
               class = "kerasmesh_error_layout_key")
  expect_identical(fixture_layout_map(), lm)
})

test_that("reading an object is no edit; refusing one edited is everywhere", {
  mesh <- fixture_mesh()
  capture.output(print(mesh$devices), str(mesh))
  expect_identical(kerasmesh:::changed_fields(mesh), character())
  expect_no_error(format(mesh))
  # Strict: a cost or search edited is refused even where it would print.
  cost <- fixture_cost()
  cost$plan$model <- "zz"
  expect_match(edited_error(format, cost), "x$plan", fixed = TRUE)
  search <- fixture_search()
  search$mesh <- fixture_mesh("mesh-1d")
  expect_error(as_layout_map(search), "search$mesh", fixed = TRUE,
               class = "kerasmesh_error_argument")
  # A fingerprint removed, or the class changed, is an edit too.
  picture <- fixture_picture()
  attr(picture, "kerasmesh_fields") <- NULL
  expect_match(edited_error(format, picture), "kerasmesh_fields",
               fixed = TRUE)
  plan <- fixture_plan()
  class(plan) <- "kerasmesh_layout_plan"
  expect_match(edited_error(format, plan), "class(x)", fixed = TRUE)
  # A column of a plan, a field of the user's own: not refused.
  plan <- fixture_plan()
  plan$mine <- 1
  expect_no_error(format(plan))
  info <- fixture_checkpoint_info()
  info$step <- NULL
  expect_match(edited_error(format, info), "x$step", fixed = TRUE)
})

test_that("an edited distribution or map is refused where it would be used", {
  dist <- fixture_distribution()
  dist$batch_dim_name <- "model"
  expect_error(kerasmesh:::check_plan_distribution(dist, arg = "d"),
               "d$batch_dim_name", fixed = TRUE,
               class = "kerasmesh_error_argument")
  expect_error(kerasmesh:::r_to_py.kerasmesh_object(dist),
               "x$batch_dim_name", fixed = TRUE,
               class = "kerasmesh_error_argument")
  lm <- unclass(fixture_layout_map())
  lm$rules[[1]] <- c("model", NA)
  class(lm) <- c("kerasmesh_layout_map", "kerasmesh_object")
  expect_error(lm[["a"]], "x$rules", fixed = TRUE,
               class = "kerasmesh_error_argument")
  expect_error(sharding_picture(lm, "a", shape = c(4, 4)), "x$rules",
               fixed = TRUE, class = "kerasmesh_error_argument")
})

test_that("a column of a plan, a comparison or a report edited is refused", {
  plan <- fixture_plan()
  plan$path <- rev(plan$path)
  expect_match(edited_error(format, plan), "x$path", fixed = TRUE)
  expect_error(check_layout(plan), "model$path", fixed = TRUE,
               class = "kerasmesh_error_argument")
  expect_error(sharding_picture(plan, plan$path[[1]]), "x$path",
               fixed = TRUE, class = "kerasmesh_error_argument")
  cmp <- fixture_comparison()
  cmp$total <- -cmp$total
  expect_match(edited_error(format, cmp), "x$total", fixed = TRUE)
  expect_error(cmp[1, ], "x$total", fixed = TRUE,
               class = "kerasmesh_error_argument")
  report <- fixture_sharding()
  report$copies <- 99L
  expect_match(edited_error(format, report), "x$copies", fixed = TRUE)
  report <- fixture_sharding()
  report$path[[1]] <- "fake/path"
  expect_error(sharding_picture(report, "fake/path"), "x$path", fixed = TRUE,
               class = "kerasmesh_error_argument")
})

test_that("rows of a comparison or a report are one, made anew", {
  cmp <- fixture_comparison()
  first <- cmp[1, ]
  expect_s3_class(first, "kerasmesh_layout_comparison")
  expect_identical(kerasmesh:::changed_fields(first), character())
  expect_identical(class(cmp[, c("layout", "total")]), "data.frame")
  expect_identical(cmp[["total"]], fixture_comparison()$total)
  report <- fixture_sharding()
  expect_output(print(report[1:2, ]), "2 variables")
  expect_identical(class(rbind(report, report)), "data.frame")
  expect_identical(class(as.data.frame(report)), "data.frame")
})

test_that("a fingerprint replaced by hand is an edit", {
  for (junk in list("junk", c(a = NA_character_), 1:3)) {
    mesh <- fixture_mesh()
    attr(mesh, "kerasmesh_fields") <- junk
    mesh$shape <- c(data = 9L, model = 9L)
    expect_error(layout_map(mesh, a = "model"),
                 'attr(mesh, "kerasmesh_fields")', fixed = TRUE,
                 class = "kerasmesh_error_argument")
    plan <- fixture_plan()
    attr(plan, "kerasmesh_fields") <- junk
    expect_match(edited_error(format, plan), 'attr(x, "kerasmesh_fields")',
                 fixed = TRUE)
  }
})

test_that("an object whose class names no maker is said to be edited", {
  dist <- fixture_distribution()
  class(dist) <- "kerasmesh_distribution"
  message <- edited_error(format, dist)
  expect_match(message, "the kerasmesh function that made it", fixed = TRUE)
  expect_no_match(message, "kerasmesh()", fixed = TRUE)
})

test_that("as.data.frame() of every data frame takes R's arguments, no more", {
  frames <- list(fixture_plan(), fixture_comparison(), fixture_sharding(),
                 summary(fixture_cost(), by = "layer"))
  for (x in frames) {
    expect_error(as.data.frame(x, foo = 1), "foo",
                 class = "kerasmesh_error_argument")
    plain <- as.data.frame(x)
    expect_identical(class(plain), "data.frame")
    expect_null(attr(plain, "kerasmesh_fields"))
    named <- as.data.frame(x, row.names = paste0("r", seq_len(nrow(x))))
    expect_identical(rownames(named)[[1]], "r1")
    expect_identical(nrow(data.frame(x)), nrow(x))
  }
  expect_identical(data.frame(as.data.frame(fixture_layout_map()))$key,
                   names(fixture_layout_map()))
})

test_that("a subset takes rows, columns and drop, no other argument", {
  frames <- list(fixture_plan(), fixture_comparison(), fixture_sharding(),
                 summary(fixture_cost(), by = "layer"))
  for (x in frames) {
    expect_error(x[1, , bogus = 1], "`bogus`",
                 class = "kerasmesh_error_argument")
    expect_identical(nrow(x[1, , drop = FALSE]), 1L)
  }
})
