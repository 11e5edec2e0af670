"""Benchmarks (speed lives here, never in tests): `python -m bench` runs them all, `python -m bench.<name>` one."""
