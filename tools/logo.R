# Draws the kerasmesh logo (a 2 x 4 mesh in a hexagon) and the site's
# favicons, so that pkgdown needs no online favicon service.
# Run from the package root: Rscript tools/logo.R
draw_logo <- function(file, width, height, label = TRUE) {
  grDevices::png(file, width = width, height = height, bg = "transparent")
  on.exit(grDevices::dev.off())
  grid::grid.newpage()
  angle <- seq(90, 450, by = 60) * pi / 180
  grid::grid.polygon(0.5 + 0.49 * cos(angle), 0.5 + 0.49 * sin(angle),
                     gp = grid::gpar(fill = "#1f3b5a", col = "#0d2238",
                                     lwd = max(1, width / 60)))
  fills <- c("#e8a33d", "#4fa3d1")
  top <- if (label) 0.58 else 0.58
  for (i in 0:1) for (j in 0:3) {
    grid::grid.rect(0.26 + j * 0.16, top - i * 0.16, 0.14, 0.14,
                    gp = grid::gpar(fill = fills[i + 1], col = NA))
  }
  if (label) {
    grid::grid.text("kerasmesh", 0.5, 0.26,
                    gp = grid::gpar(col = "white", fontsize = width / 9.2,
                                    fontface = "bold"))
  }
}

dir.create("man/figures", showWarnings = FALSE, recursive = TRUE)
dir.create("pkgdown/favicon", showWarnings = FALSE, recursive = TRUE)
draw_logo("man/figures/logo.png", 240, 278)
for (size in c(16, 32)) {
  draw_logo(sprintf("pkgdown/favicon/favicon-%dx%d.png", size, size),
            size, size, label = FALSE)
}
for (size in c(60, 76, 120, 180)) {
  name <- if (size == 180) "apple-touch-icon.png" else
    sprintf("apple-touch-icon-%dx%d.png", size, size)
  draw_logo(file.path("pkgdown/favicon", name), size, size, label = FALSE)
}
