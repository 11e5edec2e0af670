"""Engine policy (SPEC §7): deterministic, I/O-free functions, versioned by
`engine_policy_version`. Nothing in this package imports Django or touches storage."""

# The engine policies this provider serves (SPOKE_MEMORY_ENGINE; docs/recall.md). Older ones stay
# byte-identical when a newer one becomes the default.
ENGINE_POLICIES = ("engine/1", "hybrid/1", "engine/2", "hybrid/2")
