library(testthat)
library(kerasmesh)

test_check("kerasmesh")
