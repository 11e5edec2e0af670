"""The recall engines this provider serves, keyed by `engine_policy_version`.

An engine is one module that builds an `Engine` (memory.services.recall_engines.base) and calls
`register()`; it is served once its module is named in `MODULES`. At start-up
(`MemoryConfig.ready` → `install()`) the configured policy (`SPOKE_MEMORY_ENGINE`) must be
registered and runnable here, or the provider refuses to start (`ImproperlyConfigured`); the
derived-copy hooks are then registered with memory.services.derived: every copy's eraser always
(copies left by an engine served earlier still go with their content), its writer when the copy
is `always` written or belongs to the configured engine, its drain likewise."""

from __future__ import annotations

import importlib
from typing import Any

from django.conf import settings
from django.core.exceptions import ImproperlyConfigured

from memory.engine import classify, embed
from memory.services import derived
from memory.services.recall_engines.base import DerivedCopy, Engine
from memory.tasks import DRAINS

MODULES = (
    "memory.services.recall_engines.engine2",
    "memory.services.recall_engines.hybrid4",
    "memory.services.recall_engines.hybrid5",
)
# Policies served once and retired (docs/decisions/two-served-engines.md): configuring one fails
# at start-up with a message naming the served ones; migration 0023 dropped their derived copies,
# and a reflection pinned to one reads stale.
RETIRED = ("engine/1", "hybrid/1", "hybrid/2", "hybrid/3")

REGISTRY: dict[str, Engine] = {}
_loaded = False


def register(engine: Engine) -> Engine:
    """Serve `engine` under its version (classifying captures as every policy so far does)."""
    REGISTRY[engine.version] = engine
    classify.POLICIES.setdefault(engine.version, classify.POLICIES["engine/2"])
    return engine


def load() -> None:
    global _loaded
    if not _loaded:
        for name in MODULES:
            importlib.import_module(name)
        _loaded = True


def policies() -> tuple[str, ...]:
    load()
    return tuple(REGISTRY)


def get(version: str) -> Engine:
    load()
    engine = REGISTRY.get(version)
    if engine is None and version in RETIRED:
        raise ImproperlyConfigured(
            f"SPOKE_MEMORY_ENGINE={version} is retired (docs/decisions/two-served-engines.md); "
            f"this provider serves {', '.join(REGISTRY)}"
        )
    if engine is None:
        raise ImproperlyConfigured(
            f"SPOKE_MEMORY_ENGINE must be one of {', '.join(REGISTRY)}, not {version!r}"
        )
    return engine


def current() -> Engine:
    """The configured engine (SPOKE_MEMORY_ENGINE)."""
    return get(settings.SPOKE_MEMORY_ENGINE)


def engine_model() -> str:
    """The configured engine's own embedding model (memory.engine.embed uses it when
    SPOKE_MEMORY_EMBED_MODEL is empty); "" for a lexical or an unknown engine."""
    try:
        return current().embed_model
    except ImproperlyConfigured:
        return ""


embed.engine_default = engine_model


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
    return [c for c in copies() if c.write in derived.WRITERS]


def install() -> None:
    engine = current()
    why = engine.needs()
    if why:
        raise ImproperlyConfigured(f"SPOKE_MEMORY_ENGINE={engine.version} needs {why}")
    mine = {c.name for c in engine.copies}
    for copy in copies():
        if copy.erase not in derived.ERASERS:
            derived.ERASERS.append(copy.erase)
        if (copy.always or copy.name in mine) and copy.write not in derived.WRITERS:
            derived.WRITERS.append(copy.write)
        if copy.name in mine and copy.drain is not None and copy.drain not in DRAINS:
            DRAINS.append(copy.drain)


def model_pin() -> dict[str, Any] | None:
    """The embedding model identity the configured engine ranks with (None for a lexical one):
    what describe publishes and reflections pin."""
    if not current().embedder:
        return None
    return embed.identity().wire()


def describe_extensions() -> dict[str, Any]:
    """`memory.describe`'s `extensions`: what the configured engine says of itself."""
    said = current().describe()
    return {"spoke-recall": said} if said else {}


def backlogs() -> dict[str, int]:
    """Derived copies the configured engine still waits for, by copy name."""
    return {c.name: c.backlog() for c in current().copies if c.backlog is not None}
