# Sourced by `make site` before pkgdown runs. downlit links code that names
# a package (`library(keras3)`, `keras3::use_backend()`) to that package's
# site; for a package that is not installed it reads CRAN's package
# database (from a fixed CRAN address, whatever the options say), which is
# out of reach offline. This process's copy of that memoised lookup is
# filled in beforehand with the packages the docs name but this machine
# lacks, so those links point at their sites and nothing goes online.
local({
  lookup <- environment(downlit:::CRAN_urls)
  key <- lookup$`_hash`(c(lookup$`_f_hash`, list(), list()))
  known <- data.frame(
    Package = c("keras3", "tensorflow"),
    URL = c("https://keras3.posit.co/", "https://tensorflow.rstudio.com/")
  )
  lookup$`_cache`$set(key, list(value = known, visible = TRUE))
})
