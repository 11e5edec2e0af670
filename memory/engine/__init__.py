"""Engine policy (docs/protocol.md#engine-policy): deterministic, I/O-free functions, versioned by
`engine_policy_version`. Nothing in this package imports Django or touches storage."""

# The engine policies whose classification this package defines (memory.engine.classify). Which
# policies the provider serves is the recall engine registry's to say
# (memory.services.recall_engines.registry; docs/architecture.md). Older ones stay byte-identical
# when a newer one becomes the default.
ENGINE_POLICIES = ("engine/1", "hybrid/1", "engine/2", "hybrid/2", "hybrid/3", "hybrid/4")
