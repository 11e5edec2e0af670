"""tools/lint_rules.py (run by `make lint`): the SQL-homes rule and the pure-engine rule pass on
the repository and fail on a violation planted in a copy of its server packages."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tools import lint_rules

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    """A copy of the server packages (the sources only), as the check reads them."""
    for package in lint_rules.PACKAGES:
        shutil.copytree(
            ROOT / package,
            tmp_path / package,
            ignore=shutil.ignore_patterns("__pycache__", "*.pyc", "static", "templates"),
        )
    return tmp_path


def plant(tree: Path, rel: str, text: str) -> None:
    path = tree / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a", encoding="utf-8") as f:
        f.write("\n" + text + "\n")


def rules(tree: Path) -> list[tuple[str, str]]:
    return sorted({(f.rule, f.path) for f in lint_rules.check(tree)})


def test_the_repository_keeps_the_rules():
    assert lint_rules.check(ROOT) == []


def test_the_command_passes_on_the_clean_tree_and_fails_on_a_violation(tree):
    run = [sys.executable, "-m", "tools.lint_rules", "--root", str(tree)]
    clean = subprocess.run(run, cwd=ROOT, capture_output=True, text=True)
    assert clean.returncode == 0, clean.stderr
    plant(tree, "memory/services/planted.py", "def f(connection):\n    connection.cursor()")
    dirty = subprocess.run(run, cwd=ROOT, capture_output=True, text=True)
    assert dirty.returncode == 1
    assert "memory/services/planted.py:3: [sql] .cursor(" in dirty.stderr


@pytest.mark.parametrize(
    "code",
    [
        "def f(connection):\n    with connection.cursor() as cur:\n        cur.execute('SELECT 1')",
        "from django.db.models.expressions import RawSQL\nq = RawSQL('SELECT 1', [])",
        "from django.db.models import expressions\nq = expressions.RawSQL('SELECT 1', [])",
        "from memory.models import Record\nrows = Record.objects.raw('SELECT * FROM r')",
        "def f(cursor):\n    return cursor()",
    ],
)
def test_sql_outside_its_homes_fails(tree, code):
    plant(tree, "reviews/views/planted.py", code)
    assert rules(tree) == [("sql", "reviews/views/planted.py")]


@pytest.mark.parametrize(
    "home", ["memory/statements.py", "memory/selectors/planted.py", "memory/migrations/9999_x.py"]
)
def test_sql_in_its_homes_passes(tree, home):
    plant(
        tree,
        home,
        "def f(connection):\n    with connection.cursor() as cur:\n        cur.execute('')",
    )
    assert rules(tree) == []


def test_calling_the_home_and_a_plain_function_named_execute_pass(tree):
    plant(
        tree,
        "memory/services/planted.py",
        "from memory import statements\n"
        "def execute(job):\n    return job\n"
        "def f(job):\n    statements.execute(statements.PING)\n    execute(job)",
    )
    assert rules(tree) == []


@pytest.mark.parametrize(
    "code",
    [
        "import subprocess",
        "import urllib.request",
        "from urllib.parse import quote",
        "import fcntl",
        "from django.conf import settings",
        "def f():\n    import torch\n    return torch",
        "import socket",
        "import http.client",
        "import ssl",
        "from onnxruntime import InferenceSession",
        "def f():\n    import onnxruntime\n    return onnxruntime",
        "from memory.services import derived",
        "from memory import selectors",
        "import memory.models",
        "from memory.embedding import embed",
        "import os\nURL = os.environ.get('X')",
        "import os\nURL = os.getenv('X')",
        "from os import environ",
    ],
)
def test_io_in_the_engine_fails(tree, code):
    plant(tree, "memory/engine/lexical.py", code)
    assert rules(tree) == [("engine-io", "memory/engine/lexical.py")]


def test_the_engine_may_use_os_path_and_pure_modules(tree):
    plant(
        tree,
        "memory/engine/lexical.py",
        "import os\nimport re\nfrom memory.wire.canonical import digest\n"
        "from memory import engine, wire\nSEP = os.sep\nre.compile('x')",
    )
    assert rules(tree) == []


def lint_imports(tree: Path) -> subprocess.CompletedProcess[str]:
    """import-linter on the copy, with the repository's contracts (pyproject.toml)."""
    shutil.copyfile(ROOT / "pyproject.toml", tree / "pyproject.toml")
    return subprocess.run(
        [str(Path(sys.executable).parent / "lint-imports"), "--no-cache"],
        cwd=tree,
        env={**os.environ, "PYTHONPATH": str(tree)},
        capture_output=True,
        text=True,
    )


@pytest.mark.parametrize(
    ("code", "said"),
    [
        ("import subprocess", "memory.engine.lexical -> subprocess"),
        ("def f():\n    import onnxruntime", "memory.engine.lexical -> onnxruntime"),
        ("import fcntl", "memory.engine.lexical -> fcntl"),
        ("from memory.services import derived", "memory.engine.lexical -> memory.services.derived"),
        ("from memory.embedding import embed", "memory.engine.lexical -> memory.embedding.embed"),
    ],
)
def test_the_import_contracts_fail_on_an_engine_import(tree, code, said):
    """The layer contracts (`lint-imports` in `make lint`) keep memory/engine/ pure: clean on the
    copy, broken ("The engine is pure policy") once the engine imports I/O or an upper layer."""
    clean = lint_imports(tree)
    assert clean.returncode == 0, clean.stdout
    plant(tree, "memory/engine/lexical.py", code)
    dirty = lint_imports(tree)
    assert dirty.returncode == 1
    assert "The engine is pure policy" in dirty.stdout and "BROKEN" in dirty.stdout
    assert said in dirty.stdout


def test_a_stale_allowlist_entry_fails(tree):
    (tree / "spokememory" / "warm.py").unlink()
    assert rules(tree) == [("sql", "spokememory/warm.py")]


def test_the_engine_allows_no_io_anywhere_and_the_embedding_package_may(tree):
    """The embedding code left memory/engine/: nothing there is allowlisted, and the I/O it does
    (a subprocess, a file lock, the environment) is not the engine rule's business outside it."""
    assert lint_rules.ENGINE_ALLOWED == {}
    assert not list((ROOT / "memory" / "engine").glob("embed*.py"))
    plant(tree, "memory/embedding/embed_onnx.py", "import subprocess\nimport os\nos.environ")
    assert rules(tree) == []


@pytest.mark.parametrize(
    ("rel", "code", "contract", "said"),
    [
        (
            "memory/services/term_store.py",
            "def f():\n    from memory.services.recall_engines import registry",
            "Engines build on the stores, never the reverse",
            "memory.services.term_store -> memory.services.recall_engines.registry",
        ),
        (
            "memory/recall_contract.py",
            "from memory.services import derived",
            "Data flows one way",
            "memory.recall_contract -> memory.services.derived",
        ),
    ],
)
def test_the_import_contracts_fail_on_an_import_back_from_the_contract_or_a_store(
    tree, rel, code, contract, said
):
    """The recall contract sits below services/ and the stores engines build on never import an
    engine: a function-local import back (the cycle hybrid_store.enabled() once hid) breaks it."""
    plant(tree, rel, code)
    dirty = lint_imports(tree)
    assert dirty.returncode == 1
    assert said in dirty.stdout
    broken = dirty.stdout.split("Broken contracts")[1]
    assert contract in broken
