"""The spoke-memory domain app: models, wire schemas, dispatch, operations, engine policy, tasks.

Its packages (docs/architecture.md; the import direction is checked by `lint-imports`):

    models/      one module per aggregate; `to_wire()` renders the wire object
    wire/        schemas/ (JSON Schema, the single source of truth), validation, canonical (RFC
                 8785, digests), errors (a `WireError` class per code), openapi, types (re-exported)
    admission.py the one admission path: storability, capability, request schema, cognition grammar
    dispatch/    the HTTP edge (views, responses, discovery, health, auth) and edge.py (MCP's gates)
    mcp/         the MCP server: tools (each a call of the typed `edge.EdgePort`), server, http
                 (/mcp/<space_id>), bridge, stdio
    ops/         one module per op family; base.py (registry, `mutate()`, `call()`)
    services/    write machinery: mutation (receipts, idempotency, revisions), refs, content,
                 derived and erasure, recall_engines/ (the engines and their registry), term and
                 hybrid stores (vectors/), transfer, operators
    recall_contract.py  what a recall engine implements and services call; the engines' table
    selectors/   read machinery: selection, cursors (`keyset_page`), recall, lexical
    statements.py every hand-written SQL statement, each with an ORM-equivalence test, each naming
                 its space on a space-scoped table; rows.py hydrates their rows
    tasks.py     the job table's runner and `@job_handler(kind)` registry
    access.py    coverage (the union of effective grants), access_* per object, state gates
    engine/      pure policy: cognition filter, classification, ranking, reflection, transfer
    embedding/   the model's I/O: identity, the embeddings-server client, the local forward pass,
                 the int8 ONNX export (docs/embeddings.md); Django-free
"""
