"""Op family: profile (not yet built; its ops answer unknown_op)."""
