"""Generators of reference pages from the code and the wire schemas (docs/protocol.md)."""
