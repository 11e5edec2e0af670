"""Op family: records (not yet built; its ops answer unknown_op)."""
