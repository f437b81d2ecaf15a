"""Shared helpers of bench/bench.py: paths and formatting (common), brokers and tools (brokers), measured runs with
CPU per MB and interleaved pairs (runs), machine noise (noise), JFR profiles (jfr), charts and the report."""
