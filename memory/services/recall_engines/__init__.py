"""Recall engines as plug-ins (docs/architecture.md, "Recall engines (plug-ins)"): one module per
engine policy, registered in `registry.MODULES`, each implementing the contract of
memory.recall_contract (below services/). `memory.recall` runs coverage → filters →
`recall_contract.current().rank(query)` → budget; the derived copies an engine declares are
written, bulk-written, erased and drained through the hooks the registry registers.

An engine module builds an `Engine` and calls `register()`:
- `rank(query) -> Ranking`: `query.eligible` ranked best first, ties by `record_id`, with
  `total_eligible`; reads go in memory/selectors/, pure scoring in memory/engine/.
- `copies`: its derived copies (`DerivedCopy`): `write`, `bulk_write` (activation, set-wise),
  `erase`, `erase_space`, and for copies a worker makes after commit `drain()` and `backlog()`
  (/readyz). `always=True` writes a copy whatever the engine (the term rows); every registered
  eraser runs whatever the engine, so erasure reaches copies an earlier engine left.
- `describe()` (its `extensions["spoke-recall"]` entry), `needs()` (why it cannot run here, or
  None), `embedder=True` when it ranks with the configured model, `embed_model` (its model when
  SPOKE_MEMORY_EMBED_MODEL is empty: part of its policy).

To add one: write the module, add it to `registry.MODULES`, give it an oracle test (its ranking
against the plain policy function on both databases, as tests/memory/recall/test_engine2.py) and
a golden test once published (tests/memory/recall/test_golden.py). An embedding engine registers
through `fused.register_embedder` (hybrid6.py: the engine/2 head fused with the cosine side by
`fused.fused_ranking`, then scored). Retired ones are in `RETIRED` and refuse to start (docs/decisions/two-served-engines.md)."""
