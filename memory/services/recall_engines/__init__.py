"""Recall engines as plug-ins (docs/architecture.md, "Recall engines (plug-ins)"): one module per
engine policy, registered in `registry.MODULES`, each implementing the contract of
memory.recall_contract (below services/). `memory.recall` runs coverage → filters →
`recall_contract.current().rank(query)` → budget; the derived copies an engine declares are
written, bulk-written, erased and drained through the hooks the registry registers."""
