# Reference Hodges-Lehmann estimates and intervals for tests/analysis/test_hodges_lehmann.py.
# Reads one case per stdin line, "confidence;exact;a1,a2,...;b1,b2,..." (exact is TRUE,
# FALSE or NA), and prints "estimate low high conf.level" with 17 significant digits.
con <- file("stdin")
for (line in readLines(con)) {
  parts <- strsplit(line, ";", fixed = TRUE)[[1]]
  exact <- as.logical(parts[2])
  if (is.na(exact)) exact <- NULL
  a <- as.numeric(strsplit(parts[3], ",", fixed = TRUE)[[1]])
  b <- as.numeric(strsplit(parts[4], ",", fixed = TRUE)[[1]])
  w <- suppressWarnings(wilcox.test(a, b, paired = TRUE, conf.int = TRUE,
                                    conf.level = as.numeric(parts[1]), exact = exact))
  cat(sprintf("%.17g %.17g %.17g %.17g\n", w$estimate, w$conf.int[1], w$conf.int[2],
              attr(w$conf.int, "conf.level")))
}
close(con)
