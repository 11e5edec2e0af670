"""Benchmarks (not timed tests): run each module with `python -m bench.<name>`, e.g.
`python -m bench.locomo` (recall quality), `python -m bench.hybrid_latency`."""
