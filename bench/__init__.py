"""Benchmarks (speed lives here, never in tests). `python -m bench.<name>`."""
