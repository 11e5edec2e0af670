"""The wire: JSON Schemas (single source of truth), validation, canonical JSON, errors, OpenAPI."""
