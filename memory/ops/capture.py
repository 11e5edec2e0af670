"""Op family: capture (not yet built; its ops answer unknown_op)."""
