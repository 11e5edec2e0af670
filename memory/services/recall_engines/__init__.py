"""Recall engines as plug-ins (docs/architecture.md, "Adding a recall engine"): one module per
engine policy, registered in `registry.MODULES`. `memory.recall` runs coverage → filters →
`registry.current().rank(query)` → budget; the derived copies an engine declares are written,
bulk-written, erased and drained through the registry."""
