"""The op registry: whether an op writes is read from its schema; a write handler takes the
mutation scope and is run inside `mutate()` by the registry (so no write can skip it); a handler
of the wrong shape fails at import; mypy checks each handler against its op's schema."""

from __future__ import annotations

import inspect
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from memory.models import Receipt
from memory.ops import base
from memory.ops.base import HANDLERS, WRITTEN, register
from memory.services.mutation import Outcome
from memory.services.refs import space_ref
from memory.wire.validation import catalog

ROOT = Path(__file__).resolve().parents[3]


def test_every_op_has_the_shape_its_schema_says():
    for name, spec in catalog().ops.items():
        params = list(inspect.signature(WRITTEN[name]).parameters)
        assert params == (["ctx", "req", "scope"] if spec.mutating else ["ctx", "req"]), name
        # every op runs observed (counted, timed, traced: memory/observability/observe.py)
        assert HANDLERS[name].__name__.startswith("observed("), name
        # the registry runs a write handler inside mutate(), never the handler as written
        inner = HANDLERS[name].__wrapped__
        assert (inner is WRITTEN[name]) is not spec.mutating, name


def test_a_read_handler_for_a_mutating_op_fails_at_registration(monkeypatch):
    monkeypatch.delitem(HANDLERS, "memory.spaces.freeze")
    with pytest.raises(TypeError, match="memory.spaces.freeze is a mutating op"):

        @register("memory.spaces.freeze")
        def freeze(ctx, req):
            return {}

    assert "memory.spaces.freeze" not in HANDLERS


def test_a_write_handler_for_a_read_op_fails_at_registration(monkeypatch):
    monkeypatch.delitem(HANDLERS, "memory.records.get")
    with pytest.raises(TypeError, match=r"memory.records.get is a read op.*takes \(ctx, req\)"):

        @register("memory.records.get")
        def get(ctx, req, scope):
            return Outcome(refs=[])

    assert "memory.records.get" not in HANDLERS


def test_an_op_outside_the_contract_and_a_second_handler_fail():
    with pytest.raises(TypeError, match="not an op of the contract"):
        register("memory.records.undelete")(lambda ctx, req: {})
    with pytest.raises(RuntimeError, match="registered twice"):
        register("memory.records.get")(lambda ctx, req: {})


def test_a_write_handler_runs_inside_mutate(api, admin, monkeypatch):
    """Registered by the registry, a write handler gets a scope, its outcome becomes a receipt,
    and a retry with the same key replays that receipt without running the handler again."""
    runs = []

    def unfreeze(ctx, req, scope):
        runs.append(req["space_id"])
        cov = scope.coverage(req["space_id"], exclusive=True)
        return Outcome(refs=[space_ref(cov.space)])

    monkeypatch.delitem(HANDLERS, "memory.spaces.unfreeze")
    monkeypatch.delitem(WRITTEN, "memory.spaces.unfreeze")
    register("memory.spaces.unfreeze")(unfreeze)
    body = {"space_id": "s1", "idempotency_key": "reg-1"}
    first = api(admin, "memory.spaces.unfreeze", body)
    again = api(admin, "memory.spaces.unfreeze", body)
    assert first.status == 200, first.body
    assert first.receipt["status"] == "committed"
    assert first.receipt["refs"][0]["type"] == "space"
    assert again.body == first.body
    assert runs == ["s1"]
    assert Receipt.objects.filter(op="memory.spaces.unfreeze").count() == 1


def test_a_refused_write_handler_writes_nothing(api, admin, monkeypatch):
    from memory.wire.errors import permission_denied

    def unfreeze(ctx, req, scope):
        scope.coverage(req["space_id"], exclusive=True)
        raise permission_denied("space_admin")

    monkeypatch.delitem(HANDLERS, "memory.spaces.unfreeze")
    monkeypatch.delitem(WRITTEN, "memory.spaces.unfreeze")
    register("memory.spaces.unfreeze")(unfreeze)
    answer = api(admin, "memory.spaces.unfreeze", {"space_id": "s1", "idempotency_key": "r-2"})
    assert answer.code == "PERMISSION_DENIED"
    assert not Receipt.objects.filter(op="memory.spaces.unfreeze").exists()


def test_the_registry_is_the_only_runner():
    """No op module calls mutate() itself: the registry does (base.py is the one caller)."""
    callers = [
        p.name
        for p in (ROOT / "memory" / "ops").glob("*.py")
        if re.search(r"\bmutate\b[,)\n]|\bmutate\(ctx", p.read_text(encoding="utf-8"))
        and p.name != "base.py"
    ]
    assert callers == []
    assert base.mutate.__module__ == "memory.services.mutation"


BAD_HANDLERS = """
from memory.context import OpContext
from memory.ops.signatures import op
from memory.services.mutation import MutationScope, Outcome
from memory.wire import types as t


@op("memory.records.get")
def reads_a_field_its_schema_lacks(ctx: OpContext, req: t.RecordsGetRequest) -> t.RecordsGetResponse:
    raise ValueError(req["subject_id"])


@op("memory.records.list")
def untyped(ctx: OpContext, req: dict) -> dict:
    return {}


@op("memory.records.delete")
def answers_instead_of_an_outcome(
    ctx: OpContext, req: t.RecordsDeleteRequest, scope: MutationScope
) -> dict:
    return {}


@op("memory.records.update")
def typed_write(ctx: OpContext, req: t.RecordsUpdateRequest, scope: MutationScope) -> Outcome:
    ref: t.Ref = {"type": "record", "id": req["record_id"], "revision": req["expected_revision"]}
    return Outcome(refs=[ref])
"""


def test_mypy_refuses_a_handler_that_reads_a_field_its_schema_lacks(tmp_path):
    """The generated `op()` overloads tie each op name to its handler signature: mypy (the
    project's configuration, as `make lint` runs it) refuses an unknown member, an untyped
    handler and a write handler that answers instead of returning an Outcome."""
    module = tmp_path / "bad_handlers.py"
    module.write_text(textwrap.dedent(BAD_HANDLERS))
    done = subprocess.run(
        [sys.executable, "-m", "mypy", "--config-file", str(ROOT / "pyproject.toml"), str(module)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    errors = [line for line in done.stdout.splitlines() if ": error:" in line]
    lines = {int(line.split(":")[1]) for line in errors}
    source = module.read_text().splitlines()

    def line_of(text: str) -> int:
        return next(i for i, line in enumerate(source, 1) if text in line)

    assert done.returncode == 1, done.stdout + done.stderr
    assert 'TypedDict "RecordsGetRequest" has no key "subject_id"' in done.stdout
    assert line_of('req["subject_id"]') in lines
    assert line_of("def untyped") - 1 in lines or line_of("def untyped") in lines
    assert any(
        n in lines for n in (line_of("def answers_instead"), line_of("def answers_instead") - 1)
    )
    assert (
        not {line_of("def typed_write"), line_of("ref: t.Ref"), line_of("return Outcome(")} & lines
    )
