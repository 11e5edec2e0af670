"""The recall engine contract: what an engine implements and services call (issue 42 part 3). It
sits below memory/services/ (import-linter's layers), so the stores an engine builds on (term
rows, vectors) and import activation name the contract without importing an engine. The engines
(memory/services/recall_engines/) implement it; memory.services.recall_engines.base re-exports
its names for the engines written against them there.

What a recall engine declares (memory.services.recall_engines.registry keeps them by
`engine_policy_version`):

- `rank(query)`: the ranking of the authorized, filtered set (`RecallQuery.eligible`) for the
  query text, best first, with record_id → pk of the ranked rows and `total_eligible`;
- `copies`: the derived copies of record content it ranks from (term rows, vectors…), each with a
  per-record writer (called in every content write's transaction), a bulk writer (import
  activation), an eraser (every path that erases content), a whole-space eraser (import
  activation's clearing of a space) and, for copies made after commit, a drain and its backlog;
- `describe()`: what `memory.describe` publishes of it (an `extensions` entry; nothing for a
  purely lexical engine);
- `needs()`: why it cannot run on this install (a missing extra), or None;
- `embedder`: whether it ranks with the configured embedding model (whose identity reflections
  then pin);
- `embed_model`: the model it ranks with when `SPOKE_MEMORY_EMBED_MODEL` is empty (part of the
  policy: hybrid/6 the bundled model's int8 ONNX form)."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import datetime
from functools import cached_property
from typing import Any

from django.conf import settings
from django.core.exceptions import ImproperlyConfigured
from django.db.models import QuerySet

from memory.engine import classify
from memory.engine.rank import Ranked
from memory.models import Record, Space, Subject
from memory.selectors.selection import ReadFilter


@dataclass(frozen=True)
class RecallQuery:
    subject: Subject
    text: str
    scope: Callable[[], QuerySet[Record]]  # builds `eligible`
    whole: bool  # `eligible` is every live record of the subject (selection.whole_subject)
    flt: ReadFilter
    max_records: int

    @cached_property
    def eligible(self) -> QuerySet[Record]:
        """Authorized ∩ selection ∩ provenance ∩ kinds ∩ (pushed-down) cognition: built on first
        use (the ORM's building of it cost ~0.3 ms a recall that, for a whole-subject caller,
        never runs it)."""
        return self.scope()


@dataclass
class Ranking:
    ranked: list[Ranked]  # best first; at least the first max_records of the ranking
    pks: dict[str, int]  # record_id → pk of every ranked record
    total: int  # total_eligible


@dataclass(frozen=True)
class LoadedRecord:
    """A record as import activation loads it, for bulk writers (no model instance)."""

    pk: int
    space_pk: int
    subject_pk: int
    revision: int
    text: str
    created_at: datetime
    live: bool  # not a tombstone


# insert(model, field names, rows): one COPY on PostgreSQL (streaming the rows as they are
# made), bulk_create elsewhere
Insert = Callable[[Any, list[str], Iterable[tuple[Any, ...]]], None]


@dataclass(frozen=True)
class DerivedCopy:
    name: str
    write: Callable[[Iterable[Record]], None]
    bulk_write: Callable[[list[LoadedRecord], Insert], None]
    erase: Callable[[Iterable[Record]], None]
    erase_space: Callable[[Space], None]
    # the tables it keeps, each with a `record` foreign key (the erasure test scans them all)
    tables: tuple[type, ...] = ()
    always: bool = False  # written whatever engine is configured (switching finds it complete)
    drain: Callable[[], int] | None = None  # made after commit by a worker
    backlog: Callable[[], int] | None = None


def _nothing() -> dict[str, Any]:
    return {}


def _ready() -> str | None:
    return None


@dataclass(frozen=True)
class Engine:
    version: str
    rank: Callable[[RecallQuery], Ranking]
    summary: str
    copies: tuple[DerivedCopy, ...] = ()
    needs: Callable[[], str | None] = _ready
    describe: Callable[[], dict[str, Any]] = _nothing
    embedder: bool = False
    embed_model: str = ""
    tags: tuple[str, ...] = field(default=())


# The served engines (memory.services.recall_engines.registry names their modules and loads
# them; each registers here when imported). Policies served once and retired
# (docs/decisions/two-served-engines.md): configuring one fails at start-up with a message naming
# the served ones; migration 0023 dropped their derived copies, and a reflection pinned to one
# reads stale.
RETIRED = ("engine/1", "hybrid/1", "hybrid/2", "hybrid/3", "hybrid/4", "hybrid/5")

REGISTRY: dict[str, Engine] = {}
_loaders: list[Callable[[], None]] = []


def register(engine: Engine) -> Engine:
    """Serve `engine` under its version (classifying captures as every policy so far does)."""
    REGISTRY[engine.version] = engine
    classify.register_policy(engine.version)
    return engine


def register_loader(load: Callable[[], None]) -> None:
    """Run `load` (the registry's import of the served engine modules) before every look-up."""
    if load not in _loaders:
        _loaders.append(load)


def _load() -> None:
    for load in _loaders:
        load()


def policies() -> tuple[str, ...]:
    _load()
    return tuple(REGISTRY)


def get(version: str) -> Engine:
    _load()
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
