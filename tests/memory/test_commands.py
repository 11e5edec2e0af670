"""The operators' commands of docs/protocol.md#operators: one JSON object on stdout, non-zero on bad input."""

import json
from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from memory.models import ApiToken, Grant, Principal, Space
from memory.models.principals import hash_token

pytestmark = pytest.mark.django_db


def run(*args) -> dict:
    out = StringIO()
    call_command("spoke", *args, stdout=out)
    return json.loads(out.getvalue())


def test_space_principal_token_root_grant_flow(api):
    assert run("create-space", "acme", "--display-name", "Acme") == {"space_id": "acme"}
    assert Space.objects.get(pk="acme").display_name == "Acme"
    made = run("create-principal", "app")
    principal = Principal.objects.get(pk=made["principal_id"])
    assert ApiToken.objects.get(principal=principal).token_hash == hash_token(made["token"])
    assert made["token"] not in {t.token_hash for t in ApiToken.objects.all()}
    grant = run("root-grant", "acme", made["principal_id"])
    g = Grant.objects.get(pk=grant["grant_id"])
    assert (g.parent_id, g.capabilities, g.shared_access) == (None, ["space_admin"], True)
    second = run("issue-token", made["principal_id"])["token"]
    answer = api.raw("/v1/ops/memory.spaces.list", b"{}", token=second)
    assert [s["space_id"] for s in answer.body["spaces"]] == ["acme"]
    assert run("revoke-token", second) == {"revoked": True}
    assert api.raw("/v1/ops/memory.spaces.list", b"{}", token=second).status == 401


@pytest.mark.parametrize(
    "args",
    [
        ("create-space", "bad id!"),
        ("issue-token", "prn_nope"),
        ("revoke-token", "smk_nope"),
        ("root-grant", "nospace", "prn_nope"),
        ("create-principal", "x", "--user", "nobody"),
    ],
)
def test_bad_input_is_a_command_error(args):
    with pytest.raises(CommandError):
        call_command("spoke", *args, stdout=StringIO())


def test_duplicate_space_is_an_error():
    run("create-space", "acme")
    with pytest.raises(CommandError):
        run("create-space", "acme")


def test_demo_prints_console_login_and_token(api):
    demo = run("demo")
    assert demo["console"]["username"] == "moderator" and demo["console"]["password"]
    answer = api.raw(
        "/v1/ops/memory.subjects.get",
        json.dumps({"space_id": "demo", "subject_id": "user:ada"}),
        token=demo["api"]["token"],
    )
    assert answer.status == 200 and answer.body["subject"]["kind"] == "acme:user"


def test_set_rate_is_the_principals_own_limit(api):
    from django.core.cache import cache

    cache.clear()
    made = run("create-principal", "app")
    other = run("create-principal", "other")
    assert run("set-rate", made["principal_id"], "2/min") == {
        "principal_id": made["principal_id"],
        "rate": "2/min",
    }
    assert Principal.objects.get(pk=made["principal_id"]).rate == "2/min"
    statuses = [
        api.raw("/v1/ops/memory.describe", b"{}", token=made["token"]).status for _ in range(3)
    ]
    assert statuses == [200, 200, 429]
    limited = api.raw("/v1/ops/memory.describe", b"{}", token=made["token"])
    assert limited.code == "rate_limited" and int(limited.headers["Retry-After"]) >= 1
    # another principal keeps the server's default
    assert api.raw("/v1/ops/memory.describe", b"{}", token=other["token"]).status == 200
    assert run("set-rate", made["principal_id"], "default")["rate"] == "default"
    assert Principal.objects.get(pk=made["principal_id"]).rate is None
    assert api.raw("/v1/ops/memory.describe", b"{}", token=made["token"]).status == 200
    cache.clear()


@pytest.mark.parametrize("rate", ["0/min", "ten/min", "5/fortnight", "5", "-1/s", ""])
def test_set_rate_refuses_a_bad_rate_and_changes_nothing(rate):
    made = run("create-principal", "app")
    with pytest.raises(CommandError):
        run("set-rate", made["principal_id"], rate)
    assert Principal.objects.get(pk=made["principal_id"]).rate is None


def test_set_rate_of_an_unknown_principal_is_an_error():
    with pytest.raises(CommandError):
        run("set-rate", "prn_nobody", "10/s")


# --- the demo is re-runnable (issue 14): `make run` twice, or after an interrupted run ---------


def demo_counts() -> tuple[int, int, int, int]:
    from memory.models import Candidate, ProfileDocument, Record

    return (
        Principal.objects.filter(display_name="Demo app").count(),
        Candidate.objects.filter(space_id="demo").count(),
        Record.objects.filter(space_id="demo").count(),
        ProfileDocument.objects.filter(space_id="demo").count(),
    )


def console_login_works(password: str) -> bool:
    from django.test import Client

    return Client().login(username="moderator", password=password)


def token_works(api, token: str) -> bool:
    answer = api.raw(
        "/v1/ops/memory.subjects.get",
        json.dumps({"space_id": "demo", "subject_id": "user:ada"}),
        token=token,
    )
    return answer.status == 200


def test_demo_twice_keeps_one_app_one_copy_and_the_saved_credentials(api, tmp_path):
    saved = tmp_path / "demo.json"
    first = run("demo", "--save", str(saved))
    counts = demo_counts()
    assert counts == (1, 5, 2, 1)
    second = run("demo", "--save", str(saved))
    assert demo_counts() == counts
    assert second == first == json.loads(saved.read_text())
    assert console_login_works(second["console"]["password"])
    assert token_works(api, second["api"]["token"])


def test_demo_without_the_saved_file_prints_new_credentials_that_work(api):
    first = run("demo")
    second = run("demo")
    assert demo_counts() == (1, 5, 2, 1)
    assert second["console"]["password"] != first["console"]["password"]
    assert console_login_works(second["console"]["password"])
    assert not console_login_works(first["console"]["password"])
    # The lost token is retired; the printed one works.
    assert token_works(api, second["api"]["token"])
    assert not token_works(api, first["api"]["token"])
    assert ApiToken.objects.filter(revoked_at__isnull=True, label="demo").count() == 1


@pytest.mark.parametrize("damage", ["", "{not json", "[1, 2]", '{"console": "x", "api": 3}'])
def test_demo_with_an_unreadable_saved_file_starts_fresh_credentials(api, tmp_path, damage):
    saved = tmp_path / "demo.json"
    saved.write_text(damage)
    made = run("demo", "--save", str(saved))
    assert json.loads(saved.read_text()) == made
    assert console_login_works(made["console"]["password"])
    assert token_works(api, made["api"]["token"])


def test_demo_replaces_a_saved_token_that_was_revoked(api, tmp_path):
    saved = tmp_path / "demo.json"
    first = run("demo", "--save", str(saved))
    run("revoke-token", first["api"]["token"])
    second = run("demo", "--save", str(saved))
    assert second["api"]["token"] != first["api"]["token"]
    assert second["console"]["password"] == first["console"]["password"]
    assert token_works(api, second["api"]["token"])


def test_a_demo_interrupted_half_way_is_finished_by_the_next_run(api, monkeypatch):
    import memory.demo as demo

    real, calls = demo._maybe, []

    def dies_after_four(principal, op, request):
        if len(calls) == 4:
            raise KeyboardInterrupt
        calls.append(op)
        real(principal, op, request)

    monkeypatch.setattr(demo, "_maybe", dies_after_four)
    with pytest.raises(KeyboardInterrupt):
        run("demo")
    assert demo_counts() == (1, 2, 0, 0)  # two subjects and two captures made, then stopped
    monkeypatch.setattr(demo, "_maybe", real)
    made = run("demo")
    assert demo_counts() == (1, 5, 2, 1)  # the replayed steps answered from their keys
    assert token_works(api, made["api"]["token"])


def test_demo_save_is_atomic_and_private(tmp_path, monkeypatch):
    saved = tmp_path / "demo.json"
    saved.write_text('{"old": true}')

    def broken_replace(src, dst):
        raise OSError("disk full")

    monkeypatch.setattr("memory.management.commands.spoke.os.replace", broken_replace)
    with pytest.raises(OSError):
        run("demo", "--save", str(saved))
    assert saved.read_text() == '{"old": true}'  # the old file, whole
    assert list(tmp_path.iterdir()) == [saved]  # no temporary file left behind
    monkeypatch.undo()
    run("demo", "--save", str(saved))
    assert saved.stat().st_mode & 0o777 == 0o600


def test_demo_welcome_is_a_short_block_for_a_person(tmp_path):
    saved = tmp_path / "demo.json"
    out = StringIO()
    call_command(
        "spoke", "demo", "--save", str(saved), "--welcome", "http://127.0.0.1:8000", stdout=out
    )
    made = json.loads(saved.read_text())
    lines = out.getvalue().strip().splitlines()
    assert lines[0] == lines[-1] and set(lines[0]) == {"-"}
    body = "\n".join(lines)
    for expected in (
        "http://127.0.0.1:8000/console/",
        "moderator",
        made["console"]["password"],
        made["api"]["token"],
        made["agent"]["token"],
        "http://127.0.0.1:8000/v1/docs",
        "http://127.0.0.1:8000/mcp/demo",
    ):
        assert expected in body
    assert len(lines) <= 10
