"""Maintainers' tools: the generators of docs/protocol.md and docs/settings.md, and the
citation rewriter. Not part of the provider: nothing in memory/, reviews/ or spokememory/
imports this package."""
