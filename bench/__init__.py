"""Benchmarks (not timed tests): run each module with `python -m bench.<name>`."""
