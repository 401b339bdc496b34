# The console picture is pure R: built from saved descriptions.

test_that("the book kernel and a 3-D tensor print as box grids", {
  expect_snapshot(print(fixture_picture()))
  expect_snapshot(print(fixture_picture("picture-3d")))
})

test_that("pictures fit the console width they are given", {
  # From 60 columns: below that, the line naming the panels' dimension of a
  # 3-D picture is not wrapped yet.
  for (name in c("picture-book-kernel", "picture-3d")) {
    picture <- fixture_picture(name)
    for (width in c(60, 72, 80, 100, 120)) {
      lines <- format(picture, width = width)
      expect_true(all(nchar(lines) <= width),
                  label = paste(name, "at", width))
    }
  }
})

test_that("1-D, 4-D, scalar and replicated pictures print", {
  expect_snapshot({
    print(fixture_picture("picture-1d"))
    print(fixture_picture("picture-4d"))
    print(fixture_picture("picture-scalar"))
    print(fixture_picture("picture-replicated"))
  })
})

test_that("a planned or placed variable's picture names its path and source", {
  bias <- fixture_picture("picture-plan-bias")
  expect_identical(bias$path, "sequential/dense/bias")
  expect_identical(bias$source, "planned")
  # sharding_picture() of a report's row, its one shim call answered by
  # the saved description.
  method <- kerasmesh:::sharding_picture.kerasmesh_sharding
  env <- new.env(parent = asNamespace("kerasmesh"))
  env$mesh_picture <- with_shim("mesh_picture",
                                function(...) fixture("picture-placed"))
  env$report_picture <- kerasmesh:::report_picture
  environment(env$report_picture) <- env
  environment(method) <- env
  placed <- method(fixture_sharding(), "dense/kernel")
  expect_identical(placed$source, "placed")
  expect_match(format(placed)[1], "sequential/dense/kernel", fixed = TRUE)
  expect_snapshot({
    print(bias)
    print(placed)
  })
})

test_that("a wide grid splits into bands of columns that fit the width", {
  wide <- fixture_picture("picture-wide")
  for (width in c(60, 80, 120)) {
    lines <- format(wide, width = width)
    expect_lte(max(nchar(lines)), width, label = width)
  }
  # Fewer columns per band when narrower: more box tops.
  tops <- function(width) {
    sum(grepl("^ *\u250c|^ *\\+-", format(wide, width = width)))
  }
  expect_gt(tops(60), tops(120))
  expect_snapshot(print(wide, width = 60))
})

test_that("pictures keep the shards' ranges, devices and sizes", {
  kernel <- fixture_picture()
  expect_s3_class(kernel, "kerasmesh_sharding_picture")
  expect_identical(kernel$shard_shape, c(16000L, 16000L))
  expect_identical(kernel$copies, 2L)
  expect_identical(kernel$start[, 2], c(0, 16000, 32000, 48000))
  expect_identical(kernel$stop[, 1], rep(16000, 4))
  expect_identical(kernel$devices[[4]], c("cpu:3", "cpu:7"))
  expect_identical(kernel$device_bytes, 16000 * 16000 * 4)
  scalar <- fixture_picture("picture-scalar")
  expect_identical(scalar$shape, integer())
  expect_identical(scalar$devices[[1]], sprintf("cpu:%d", 0:7))
  replicated <- fixture_picture("picture-replicated")
  expect_identical(replicated$copies, 8L)
  expect_identical(replicated$dtype, "bfloat16")
  expect_identical(replicated$device_bytes, replicated$bytes)
})
