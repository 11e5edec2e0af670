"""The recall engine registry registers its hooks through each owner's registration function
(issue 42, part 3: hooks registered, not assigned): the embedding code's engine-default model
(`embed.register_engine_default`), the derived-copy writers and erasers
(`derived.register_writer` / `register_eraser`), the after-commit drains
(`tasks.register_drain`) and the classification policy of each served engine
(`classify.register_policy`); each registers once however often `install()` runs."""

from __future__ import annotations

import pytest

from memory import tasks
from memory.embedding import embed
from memory.engine import classify
from memory.services import derived, hybrid_store, term_store
from memory.services.recall_engines import registry


@pytest.fixture
def restored(monkeypatch):
    """Every hook table as it was, whatever the test registers."""
    monkeypatch.setattr(derived, "WRITERS", list(derived.WRITERS))
    monkeypatch.setattr(derived, "ERASERS", list(derived.ERASERS))
    monkeypatch.setattr(tasks, "DRAINS", list(tasks.DRAINS))
    monkeypatch.setattr(classify, "POLICIES", dict(classify.POLICIES))
    monkeypatch.setattr(embed, "_engine_default", embed._engine_default)


def test_the_engine_default_model_is_the_registered_hook(settings, restored):
    settings.SPOKE_MEMORY_ENGINE = "hybrid/6"
    assert embed.engine_default() == embed.INT8_NAME  # the registry's hook, registered at import
    settings.SPOKE_MEMORY_ENGINE = "engine/2"
    assert embed.engine_default() == ""
    embed.register_engine_default(lambda: "a-model")
    assert embed.engine_default() == "a-model"
    assert embed.current_model() == (embed.config().model or "a-model")


def test_registered_hooks_run_once_however_often_they_register(monkeypatch):
    for table in ("WRITERS", "ERASERS"):
        monkeypatch.setattr(derived, table, [])
    monkeypatch.setattr(tasks, "DRAINS", [])
    seen: list[int] = []

    def writer(records):
        seen.extend(r for r in records)

    derived.register_writer(writer)
    derived.register_writer(writer)
    derived.register_eraser(writer)
    derived.register_eraser(writer)
    assert derived.WRITERS.count(writer) == 1 and derived.ERASERS.count(writer) == 1
    assert derived.writes(writer) and not derived.writes(print)
    derived.content_written([1, 2])
    derived.content_erased([3])
    assert seen == [1, 2, 3]

    def drain() -> int:
        return 0

    tasks.register_drain(drain)
    tasks.register_drain(drain)
    assert tasks.DRAINS.count(drain) == 1


def test_install_registers_each_copy_hook_once(settings, restored):
    settings.SPOKE_MEMORY_ENGINE = "hybrid/6"
    registry.install()
    registry.install()
    for hook in (term_store.write_terms, hybrid_store.write_embeddings):
        assert derived.WRITERS.count(hook) == 1
    assert derived.ERASERS.count(hybrid_store.erase_embeddings) == 1
    assert tasks.DRAINS.count(hybrid_store.drain_backlog) == 1


def test_a_registered_engine_classifies_as_engine_2_unless_it_has_its_own_rules(restored):
    classify.register_policy("hybrid/9")
    assert classify.POLICIES["hybrid/9"] is classify.POLICIES["engine/2"]
    own = classify.POLICIES["engine/2"]
    classify.POLICIES["own/1"] = print  # type: ignore[assignment]
    classify.register_policy("own/1")
    assert classify.POLICIES["own/1"] is print
    assert classify.POLICIES["engine/2"] is own


def test_the_contract_keeps_the_served_engines_and_the_old_names_still_import(settings):
    """The contract below services/ holds the table; the registry and recall_engines.base
    re-export its names (engines written against them keep working)."""
    from memory import recall_contract
    from memory.services.recall_engines import base

    for name in ("RecallQuery", "Ranking", "DerivedCopy", "Engine", "LoadedRecord", "Insert"):
        assert getattr(base, name) is getattr(recall_contract, name)
    for name in ("REGISTRY", "RETIRED", "register", "get", "current", "policies"):
        assert getattr(registry, name) is getattr(recall_contract, name)
    settings.SPOKE_MEMORY_ENGINE = "engine/2"
    assert recall_contract.current().version == "engine/2"
    settings.SPOKE_MEMORY_ENGINE = "hybrid/6"
    assert recall_contract.current().embedder


def test_a_look_up_runs_the_registered_loaders_first(monkeypatch, restored):
    from memory import recall_contract

    monkeypatch.setattr(recall_contract, "REGISTRY", dict(recall_contract.REGISTRY))
    monkeypatch.setattr(recall_contract, "_loaders", list(recall_contract._loaders))
    engine = recall_contract.Engine(
        version="test/1",
        rank=lambda q: recall_contract.Ranking([], {}, 0),
        summary="a test engine",
    )
    loads: list[str] = []

    def load() -> None:
        loads.append("load")
        recall_contract.register(engine)

    recall_contract.register_loader(load)
    recall_contract.register_loader(load)
    assert recall_contract.get("test/1") is engine
    assert loads == ["load"]  # registered once
    assert "test/1" in recall_contract.policies()
    assert classify.POLICIES["test/1"] is classify.POLICIES["engine/2"]
