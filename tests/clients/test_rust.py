"""The Rust client (clients/rust, crate spoke-memory-client) under `cargo test` against the live
provider: this test starts the server (pytest-django's live_server on this leg's database) and a
real Celery worker, makes the space and principal the Rust suite needs, runs `cargo test` with the
base URL and token in its environment, and asserts every Rust test passed (none skipped). Then the
compile-fail check (clients/rust/compile_fail: a wrong field type or a missing member must not
build) and the README's Rust tour, each as a crate outside the repository depending on the crate
by path, as an app would.

The crate builds offline from Debian's packaged crates (.ci/setup.d/50-rust installs them;
clients/rust/.cargo/config.toml points crates-io at /usr/share/cargo/registry). Every build
shares clients/rust/target, so only the first is slow. Skipped (with the reason) only when the
machine has no cargo."""

from __future__ import annotations

import fcntl
import json
import os
import re
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from memory.services.operators import issue_root_grant
from tests.conftest import make_persona, make_space

CRATE = Path(__file__).resolve().parents[2] / "clients" / "rust"
CARGO = shutil.which("cargo") or str(Path.home() / ".cargo" / "bin" / "cargo")

pytestmark = pytest.mark.skipif(
    not Path(CARGO).exists(),
    reason="cargo is not installed: the Rust client needs the Rust toolchain (.ci/setup.d/50-rust)",
)


@pytest.fixture(scope="module")
def cargo_lock() -> Iterator[None]:
    """One cargo at a time on the shared target/ (two legs may run at once)."""
    CRATE.joinpath("target").mkdir(exist_ok=True)
    with open(CRATE / "target" / ".test.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        yield


def cargo(*args: str, cwd: Path = CRATE, **env: str) -> subprocess.CompletedProcess:
    return subprocess.run(  # noqa: S603 (our cargo, fixed arguments)
        [CARGO, *args],
        cwd=cwd,
        env={
            **os.environ,
            "CARGO_TARGET_DIR": str(CRATE / "target"),
            "CARGO_TERM_COLOR": "never",
            **env,
        },
        capture_output=True,
        text=True,
        timeout=1800,
    )


def app_crate(folder: Path, main: str) -> Path:
    """A binary crate in `folder` whose main.rs is `main`, depending on the client by path, built
    offline from the same registry as the client (its .cargo/config.toml)."""
    (folder / "src").mkdir(parents=True)
    (folder / ".cargo").mkdir()
    shutil.copy(CRATE / ".cargo" / "config.toml", folder / ".cargo" / "config.toml")
    (folder / "Cargo.toml").write_text(
        '[package]\nname = "app"\nversion = "0.1.0"\nedition = "2021"\n\n[dependencies]\n'
        f'spoke-memory-client = {{ path = "{CRATE}" }}\nserde_json = "1"\n\n[workspace]\n'
    )
    (folder / "src" / "main.rs").write_text(main)
    return folder


def tally(output: str) -> dict[str, int]:
    """The `test result:` lines of every test binary, summed."""
    counts = {"passed": 0, "failed": 0, "ignored": 0}
    for line in re.findall(r"^test result: .*$", output, re.M):
        for key in counts:
            found = re.search(rf"(\d+) {key}", line)
            counts[key] += int(found.group(1)) if found else 0
    return counts


@pytest.mark.worker
@pytest.mark.django_db(transaction=True)
def test_cargo_test_passes_against_the_live_provider(live_server, start_worker, cargo_lock):
    app = make_persona("rust app")
    issue_root_grant(make_space("rs1"), app.principal)
    start_worker()
    done = cargo(
        "test",
        "--",
        "--test-threads=1",
        SPOKE_URL=live_server.url,
        SPOKE_TOKEN=app.token,
        SPOKE_SPACE="rs1",
    )
    output = done.stdout + done.stderr
    assert done.returncode == 0, output[-20000:]
    assert "SKIPPED" not in output, output
    written = sum(
        len(re.findall(r"^#\[test\]$", path.read_text(), re.M))
        for path in (CRATE / "tests").glob("*.rs")
    )
    doctests = len(re.findall(r"^//! ```", (CRATE / "src" / "lib.rs").read_text(), re.M)) // 2
    assert written >= 16
    assert tally(output) == {"passed": written + doctests, "failed": 0, "ignored": 0}, output
    assert app.token not in output


@pytest.mark.parametrize("name", sorted(p.stem for p in (CRATE / "compile_fail").glob("*.rs")))
def test_a_request_off_its_schema_does_not_compile(name, tmp_path, cargo_lock):
    source = (CRATE / "compile_fail" / f"{name}.rs").read_text()
    expect = re.match(r"// expect: (\S+)", source).group(1)
    folder = app_crate(tmp_path / "app", source)
    done = cargo("build", "--quiet", cwd=folder)
    output = done.stdout + done.stderr
    if expect == "builds":
        assert done.returncode == 0, output
    else:
        assert done.returncode != 0, f"{name}.rs compiled"
        assert f"error[{expect}]" in output, output
        assert len(set(re.findall(r"error\[(E\d+)\]", output))) == 1, output


@pytest.mark.django_db(transaction=True)
def test_the_main_readme_rust_tour_runs_outside_the_repository(live_server, tmp_path, cargo_lock):
    from spoke_memory_client import MemoryClient

    from memory.demo import build_demo

    demo = build_demo()
    (tmp_path / "var").mkdir()
    (tmp_path / "var" / "demo.json").write_text(json.dumps(demo))
    text = (CRATE.parents[1] / "README.md").read_text()
    section = text[text.index("## The tour in Rust") :].split("\n## ", 1)[0]
    tour = re.search(r"```rust\n(.*?)```", section, re.S).group(1)
    assert len(tour.strip().splitlines()) <= 20
    tour = tour.replace("http://127.0.0.1:8000", live_server.url)
    tour = tour.replace('"var/demo.json"', json.dumps(str(tmp_path / "var" / "demo.json")))
    folder = app_crate(tmp_path / "app", tour)
    done = cargo("run", "--quiet", cwd=folder)
    assert done.returncode == 0, done.stdout + done.stderr
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
