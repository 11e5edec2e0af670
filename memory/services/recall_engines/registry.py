"""The recall engines this provider serves, keyed by `engine_policy_version`.

An engine is one module that builds an `Engine` and calls `register()` (both of the contract,
memory.recall_contract, which keeps the table and answers `get`/`current`/`policies`; re-exported
here); it is served once its module is named in `MODULES` (the contract runs `load`, registered
with it, before a look-up). At start-up
(`MemoryConfig.ready` → `install()`) the configured policy (`SPOKE_MEMORY_ENGINE`) must be
registered and runnable here, or the provider refuses to start (`ImproperlyConfigured`); the
derived-copy hooks are then registered (memory.services.derived's register_writer and
register_eraser, memory.tasks.register_drain): every copy's eraser always
(copies left by an engine served earlier still go with their content), its writer when the copy
is `always` written or belongs to the configured engine, its drain likewise."""

from __future__ import annotations

import importlib
from typing import Any

from django.core.exceptions import ImproperlyConfigured

from memory.embedding import embed
from memory.recall_contract import (
    REGISTRY,
    RETIRED,
    DerivedCopy,
    Engine,
    current,
    get,
    policies,
    register,
    register_loader,
)
from memory.services import derived, rerank
from memory.tasks import register_drain

MODULES = (
    "memory.services.recall_engines.engine2",
    "memory.services.recall_engines.hybrid6",
)
_loaded = False


def load() -> None:
    """Import the served engine modules (each registers its engine with the contract), once."""
    global _loaded
    if not _loaded:
        for name in MODULES:
            importlib.import_module(name)
        _loaded = True


register_loader(load)

__all__ = [
    "MODULES",
    "REGISTRY",
    "RETIRED",
    "Engine",
    "active_copies",
    "backlogs",
    "copies",
    "current",
    "describe_extensions",
    "engine_model",
    "get",
    "install",
    "load",
    "model_pin",
    "policies",
    "register",
]


def engine_model() -> str:
    """The configured engine's own embedding model (memory.embedding.embed uses it when
    SPOKE_MEMORY_EMBED_MODEL is empty); "" for a lexical or an unknown engine."""
    try:
        return current().embed_model
    except ImproperlyConfigured:
        return ""


embed.register_engine_default(engine_model)


def copies() -> list[DerivedCopy]:
    """Every registered engine's derived copies, each once, in registration order."""
    load()
    out: dict[str, DerivedCopy] = {}
    for engine in REGISTRY.values():
        for copy in engine.copies:
            out.setdefault(copy.name, copy)
    return list(out.values())


def active_copies() -> list[DerivedCopy]:
    """The copies whose writer is registered (the ones content writes keep up to date)."""
    return [c for c in copies() if derived.writes(c.write)]


def install() -> None:
    engine = current()
    why = engine.needs()
    if why:
        raise ImproperlyConfigured(f"SPOKE_MEMORY_ENGINE={engine.version} needs {why}")
    mine = {c.name for c in engine.copies}
    for copy in copies():
        derived.register_eraser(copy.erase)
        if copy.always or copy.name in mine:
            derived.register_writer(copy.write)
        if copy.name in mine and copy.drain is not None:
            register_drain(copy.drain)


def model_pin() -> dict[str, Any] | None:
    """The embedding model identity the configured engine ranks with (None for a lexical one):
    what describe publishes and reflections pin."""
    if not current().embedder:
        return None
    return embed.identity().wire()


def describe_extensions() -> dict[str, Any]:
    """`memory.describe`'s `extensions`: what the configured engine says of itself."""
    said = current().describe()
    reranker = rerank.identity()  # the rerank stage is part of the policy too
    if reranker is not None:
        said = {**said, "reranker": reranker}
    return {"spoke-recall": said} if said else {}


def backlogs() -> dict[str, int]:
    """Derived copies the configured engine still waits for, by copy name."""
    return {c.name: c.backlog() for c in current().copies if c.backlog is not None}
