"""Op family: transfer (not yet built; its ops answer unknown_op)."""
