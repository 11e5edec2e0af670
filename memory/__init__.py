"""The spoke-memory domain app: models, wire schemas, dispatch, operations, engine policy, tasks."""
