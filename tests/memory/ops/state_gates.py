"""The state gates of docs/protocol.md#authorization as (setup op, error code) cases: each test of a write op that
must refuse a frozen space, a fenced or archived subject, or a fenced context uses this list."""

STATE_GATES = [
    ({"op": "memory.spaces.freeze", "body": {}}, "SPACE_FROZEN"),
    (
        {"op": "memory.subjects.fence", "body": {"subject_id": "u1", "action": "fence"}},
        "SUBJECT_FENCED",
    ),
    (
        {"op": "memory.subjects.fence", "body": {"subject_id": "u1", "action": "archive"}},
        "SUBJECT_ARCHIVED",
    ),
    (
        {
            "op": "memory.subjects.fence",
            "body": {"subject_id": "u1", "action": "fence", "context_id": "c1"},
        },
        "CONTEXT_FENCED",
    ),
]
