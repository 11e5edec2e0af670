"""The TypeScript client (clients/typescript) under Node's own test runner against the live
provider: this test starts the server (pytest-django's live_server on this leg's database) and a
real Celery worker, makes the spaces and principals the Node suite needs, runs `node --test` with
the base URL and token in its environment, and asserts every Node test passed (none skipped).
`npm ci` runs first when clients/typescript/node_modules is missing or older than the lock file
(CI's .ci/setup.d/40-typescript has done it already)."""

from __future__ import annotations

import fcntl
import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from memory.services.operators import issue_root_grant
from tests.conftest import make_persona, make_space

TS = Path(__file__).resolve().parents[2] / "clients" / "typescript"


def _npm(*args: str) -> None:
    done = subprocess.run(  # noqa: S603 (npm with fixed arguments)
        ["npm", *args, "--no-audit", "--no-fund"],  # noqa: S607
        cwd=TS,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, f"npm {' '.join(args)}:\n{done.stdout}\n{done.stderr}"


@pytest.fixture(scope="module")
def node_suite() -> Path:
    """The compiled Node tests (.build/test), their dev dependencies installed first if needed."""
    assert shutil.which("node") and shutil.which("npm"), "Node 20+ and npm are needed"
    with open(TS / ".build.lock", "w") as lock:  # two legs at once share this folder
        fcntl.flock(lock, fcntl.LOCK_EX)
        installed = TS / "node_modules" / ".package-lock.json"
        if (
            not installed.exists()
            or installed.stat().st_mtime < (TS / "package-lock.json").stat().st_mtime
        ):
            _npm("ci")
        _npm("run", "pretest")
    return TS / ".build" / "test"


def run_node(*files: Path, **env: str) -> tuple[int, str]:
    done = subprocess.run(  # noqa: S603 (our node, fixed arguments)
        ["node", "--test", "--test-concurrency=1", "--test-reporter=tap", *map(str, files)],  # noqa: S607
        cwd=TS,
        env={**os.environ, **env},
        capture_output=True,
        text=True,
        timeout=900,
    )
    return done.returncode, done.stdout + done.stderr


def counts(output: str) -> dict[str, int]:
    return {
        k: int(v) for k, v in re.findall(r"^# (pass|fail|skipped|cancelled) (\d+)$", output, re.M)
    }


@pytest.mark.worker
@pytest.mark.django_db(transaction=True)
def test_the_node_suite_passes_against_the_live_provider(live_server, start_worker, node_suite):
    app = make_persona("ts app")
    for space_id in ("ts1", "ts-import", "ts-freeze"):
        issue_root_grant(make_space(space_id), app.principal)
    grantee = make_persona("ts grantee")
    start_worker()
    suites = [
        node_suite / f"{name}.test.js" for name in ("families", "behaviour", "pending", "ports")
    ]
    rc, output = run_node(
        *suites,
        SPOKE_URL=live_server.url,
        SPOKE_TOKEN=app.token,
        SPOKE_SPACE="ts1",
        SPOKE_IMPORT_SPACE="ts-import",
        SPOKE_FREEZE_SPACE="ts-freeze",
        SPOKE_GRANTEE=grantee.id,
    )
    assert rc == 0, output[-20000:]
    tally = counts(output)
    assert tally["fail"] == 0 and tally["skipped"] == 0 and tally["cancelled"] == 0, output
    written = sum(
        len(re.findall(r"^\s*test\(", (TS / "test" / f"{name}.test.ts").read_text(), re.M))
        for name in ("families", "behaviour", "pending", "ports")
    )
    assert tally["pass"] == written, output
    assert app.token not in output


def test_the_package_packs_installs_imports_and_decides_retries(node_suite):
    """npm pack / install / import / type-check (pack.test.ts), and the client's decisions on
    answers the live provider cannot be made to give (scripted.test.ts)."""
    rc, output = run_node(node_suite / "pack.test.js", node_suite / "scripted.test.js")
    assert rc == 0, output[-20000:]
    written = sum(
        len(re.findall(r"^\s*test\(", (TS / "test" / f"{name}.test.ts").read_text(), re.M))
        for name in ("pack", "scripted")
    )
    assert counts(output) == {"pass": written, "fail": 0, "skipped": 0, "cancelled": 0}, output


# --- the README examples, type-checked by tsc and run by node ---------------------------------


def run_ts_example(code: str, folder: Path, **env: str) -> subprocess.CompletedProcess:
    """`code` as an app's module: the package linked in as `npm install ./clients/typescript`
    links it, compiled by the package's tsc (strict, Node types), then run by node."""
    (folder / "node_modules").mkdir(parents=True)
    (folder / "node_modules" / "spoke-memory-client").symlink_to(TS)
    (folder / "package.json").write_text(json.dumps({"type": "module", "private": True}))
    (folder / "example.ts").write_text(code)
    tsconfig = {
        "compilerOptions": {
            "target": "ES2022",
            "module": "NodeNext",
            "moduleResolution": "NodeNext",
            "strict": True,
            "types": ["node"],
            "typeRoots": [str(TS / "node_modules" / "@types")],
        },
        "files": ["example.ts"],
    }
    (folder / "tsconfig.json").write_text(json.dumps(tsconfig))
    tsc = TS / "node_modules" / "typescript" / "bin" / "tsc"
    built = subprocess.run(  # noqa: S603 (our node, fixed arguments)
        ["node", str(tsc), "-p", "tsconfig.json"],  # noqa: S607
        cwd=folder,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert built.returncode == 0, built.stdout + built.stderr
    return subprocess.run(  # noqa: S603 (our node, fixed arguments)
        ["node", "example.js"],  # noqa: S607
        cwd=folder,
        env={**os.environ, **env},
        capture_output=True,
        text=True,
        timeout=300,
    )


@pytest.mark.django_db(transaction=True)
def test_the_main_readme_typescript_tour_runs(live_server, tmp_path, node_suite):
    from spoke_memory_client import MemoryClient

    from memory.demo import build_demo

    demo = build_demo()
    (tmp_path / "var").mkdir()
    (tmp_path / "var" / "demo.json").write_text(json.dumps(demo))
    text = (TS.parents[1] / "README.md").read_text()
    section = text[text.index("## The tour in TypeScript") :].split("\n## ", 1)[0]
    tour = re.search(r"```ts\n(.*?)```", section, re.S).group(1)
    assert len(tour.strip().splitlines()) <= 10
    tour = tour.replace("http://127.0.0.1:8000", live_server.url)
    tour = tour.replace('"var/demo.json"', json.dumps(str(tmp_path / "var" / "demo.json")))
    done = run_ts_example(tour, tmp_path / "app")
    assert done.returncode == 0, done.stderr
    token = demo["api"]["token"]
    with MemoryClient(live_server.url, token) as client:  # the same recall, by the Python client
        recall = client.recall(
            space_id="demo", subject_id="user:ada", query={"text": "how does Ada like answers?"}
        )
    expected = [
        f"{r['rank']} {r['record']['content']['text']}" for r in recall["recall"]["results"]
    ]
    assert expected and done.stdout.splitlines() == expected
    assert token not in done.stdout + done.stderr


@pytest.mark.django_db(transaction=True)
def test_the_package_readme_example_runs(live_server, tmp_path, node_suite):
    app = make_persona("demo app")
    issue_root_grant(make_space("demo"), app.principal)
    text = (TS / "README.md").read_text()
    example = re.search(r"```ts\n(.*?)```", text, re.S).group(1)
    done = run_ts_example(
        example, tmp_path / "app", SPOKE_URL=live_server.url, SPOKE_TOKEN=app.token
    )
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].startswith("provider: ")
    assert lines[1] == "1 Lin prefers green tea over coffee."
    assert lines[2] == "conflict; current revision 1"
    assert app.token not in done.stdout + done.stderr


# --- in a browser ------------------------------------------------------------------------------

IN_THE_PAGE = """async ([base, token, space]) => {
  const m = await import("/__spoke_ts/index.js");
  const client = new m.MemoryClient(base, token, { capabilities: ["spoke-memory"] });
  await client.subjects.ensure({ space_id: space, subject_id: "user:web" });
  const created = await client.records.create({
    space_id: space, subject_id: "user:web", kind: "fact",
    content: { text: "reads the news in a browser" }, placement: { scope: "shared" },
  });
  const { recall } = await client.recall({ space_id: space, subject_id: "user:web", query: { text: "news" } });
  const missing = await client.records.get({ space_id: space, record_id: "rec_0" }).catch((e) => e);
  const controller = new AbortController();
  controller.abort();
  const aborted = await client.describe({}, { signal: controller.signal }).catch((e) => e);
  await client.close();
  return {
    key: created.receipt.status,
    texts: recall.results.map((r) => r.record.content.text),
    missing: [missing instanceof m.NotFound, missing.status],
    aborted: aborted.name,
    shown: String(client) + JSON.stringify(client),
  };
}"""


@pytest.mark.browser
@pytest.mark.django_db(transaction=True)
def test_the_built_package_runs_in_chromium_against_the_live_provider(live_server, browser):
    """dist/ as a browser loads it (ES modules, the browser's fetch and AbortController), from a
    page of the provider's own origin (Playwright serves the package's files under /__spoke_ts/)."""
    app = make_persona("web app")
    issue_root_grant(make_space("web"), app.principal)
    base = live_server.url
    context = browser.new_context()
    try:
        page = context.new_page()

        def serve(route) -> None:
            name = route.request.url.split("/__spoke_ts/", 1)[1]
            if name == "page.html":
                route.fulfill(body="<!doctype html><title>spoke</title>", content_type="text/html")
                return
            path = (TS / "dist" / name).resolve()
            assert path.parent == (TS / "dist").resolve() and path.suffix == ".js", name
            route.fulfill(body=path.read_text(), content_type="text/javascript")

        page.route(f"{base}/__spoke_ts/**", serve)
        page.goto(f"{base}/__spoke_ts/page.html")
        result = page.evaluate(IN_THE_PAGE, [base, app.token, "web"])
    finally:
        context.close()
    assert result["key"] == "committed"
    assert result["texts"] == ["reads the news in a browser"]
    assert result["missing"] == [True, 404]
    assert result["aborted"] == "AbortError"
    assert app.token not in result["shown"]
