"""Engine policy (SPEC §7): deterministic, I/O-free functions, versioned by
`engine_policy_version`. Nothing in this package imports Django or touches storage."""
