"""Op family: candidates (not yet built; its ops answer unknown_op)."""
