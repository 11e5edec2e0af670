"""Op family: recall (not yet built; its ops answer unknown_op)."""
