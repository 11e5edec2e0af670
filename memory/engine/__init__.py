"""Engine policy (docs/protocol.md#engine-policy): deterministic, I/O-free functions, versioned by
`engine_policy_version`. Nothing in this package imports Django or touches storage."""

# The engine policies whose classification this package defines (memory.engine.classify). Which
# policies the provider serves is the recall engine registry's to say
# (memory.services.recall_engines.registry; docs/architecture.md). A served one stays
# byte-identical when a newer one becomes the default; engine/1 and hybrid/1–5 are retired
# (docs/decisions/two-served-engines.md).
ENGINE_POLICIES = ("engine/2", "hybrid/6")
