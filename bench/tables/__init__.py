"""One module per table of the benchmark report; each has run(...) returning rows and markdown(...) rendering them."""
