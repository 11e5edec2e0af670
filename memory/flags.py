"""The wire capability flags of docs/protocol.md#dispatch, defined once. Plain constants with no imports, so
settings (the served set), the edge (negotiation), admission (capability gate) and the op schemas'
`flag` members all name the same strings."""

CORE = "spoke-memory"
COGNITION = "spoke-cognition"
REFLECTION = "spoke-memory-reflection"
TRANSFER = "spoke-memory-transfer"
# Flags that only mean something on top of the core flag (negotiation drops them without it).
SUB_FLAGS = (REFLECTION, TRANSFER)
ALL_FLAGS = sorted([COGNITION, CORE, REFLECTION, TRANSFER])
