"""Op family: reflections (not yet built; its ops answer unknown_op)."""
