"""Shared helpers of bench/bench.py: the run's paths and state (context), constants and formatting (common), brokers
and tools (brokers), measured runs with CPU per MB and interleaved pairs (runs), page cache (memory), machine noise
(noise), JFR profiles (jfr), the targets' rules (targets), charts and the report."""
