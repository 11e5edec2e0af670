"""Benchmarks: `python -m bench.locomo` (recall quality), `python -m bench.hybrid_latency`."""
