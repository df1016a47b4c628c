"""Reproducible benchmarks: `python -m bench` runs every figure and writes bench/RESULTS.md,
`python -m bench NAME` runs one (see bench/README.md)."""
