"""The project's structural rules, checked (run by `make lint`; docs/decisions/rules-as-checks.md).

Two rules, each with its one allowed home; everything else in the server packages (memory/,
reviews/, spokememory/) must keep them:

- **sql**: SQL is written and run in the SQL homes only: `memory/statements.py` (every
  hand-written statement, and `statements.execute`, the one way to run one), `memory/selectors/`
  (read queries) and `memory/migrations/`. Elsewhere a call of `cursor(`, `RawSQL(`, `.raw(` or
  `.execute(` fails the check; `statements.execute(...)` (calling the home) is the sanctioned
  form.
- **engine-io**: `memory/engine/` is pure policy: it imports no `subprocess`, `urllib`/`http`/
  `socket`/`ssl`, `fcntl`, Django (or DRF, Celery, psycopg), `torch`/`onnxruntime` (or the other
  model libraries), nor `memory.services`/`selectors`/`models`/`embedding` (anywhere in a module,
  function-local imports included) and reads no `os.environ` / `os.getenv` (settings reach it as
  arguments). The embedding code that does such I/O lives in `memory/embedding/`.
  import-linter's "The engine is pure policy" contract (pyproject.toml) says the same of imports.

The allowlists below name today's other files, each with why. An entry whose file keeps the rule
(or is gone) fails the check too, so the lists only shrink.

    python -m tools.lint_rules               # the repository
    python -m tools.lint_rules --root DIR    # another tree (the tests plant violations in one)

Reads the sources as text (ast); imports nothing of Django or the provider."""

from __future__ import annotations

import argparse
import ast
import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("memory", "reviews", "spokememory")

# The SQL homes: statements.py, selectors/, migrations/.
SQL_HOMES = ("memory/statements.py", "memory/selectors/", "memory/migrations/")
# Files outside the homes that run SQL (or call an `.execute` that is not SQL) today. Do not
# add to this list: put the statement in memory/statements.py and call statements.execute.
SQL_ALLOWED = {
    # Redis, not SQL: the limiter's MULTI/EXEC pipeline (`pipe.execute()`).
    "memory/limits.py": "a Redis pipeline's execute(), not SQL",
    # The hot-path row fetcher (`rows.fetch`): runs the fixed-shape hot queries (statements.py's,
    # and access.py's coverage query) on one cursor, to skip the ORM's compile per call;
    # statements.py imports it, so it sits below the home rather than in it.
    "memory/rows.py": "runs the fixed-shape hot queries on a raw cursor (below statements.py)",
    # Import activation's bulk load: psycopg 3's COPY ... FROM STDIN and SET LOCAL
    # session_replication_role on the cursor itself (no statements.execute form for COPY).
    "memory/services/transfer_load.py": "COPY FROM STDIN bulk load needs the cursor's copy()",
    # The connection_created hook that sets statement_timeout on each new PostgreSQL
    # connection; it runs before the app registry is usable by statements.py's callers.
    "spokememory/warm.py": "per-connection set_config(statement_timeout) at connect",
    # ANALYZE of the tables a bulk write filled, and the planner's row counts from pg_class
    # (issue 49): maintenance statements on the catalog, not queries of the product's rows.
    "memory/services/table_stats.py": "ANALYZE, VACUUM and pg_class reads after a bulk write",
    # The scrape-time gauges of the database itself (pg_stat_activity, SHOW max_connections),
    # not the product's rows (those go through the ORM).
    "memory/observability/collect.py": "pg_stat_activity and max_connections at scrape time",
    # `manage.py spoke citus-setup`: Citus's own DDL functions (create_reference_table,
    # create_distributed_table, SET LOCAL of citus.* settings), run once by an operator.
    "memory/services/citus.py": "Citus DDL (create_distributed_table and the like) at set-up",
}

ENGINE = "memory/engine/"
# Processes, network clients, file locks, Django and its neighbours, the model runtimes, and the
# layers above the engine (storage, reads, the embedding code): a module or any submodule of it.
ENGINE_FORBIDDEN_MODULES = (
    "subprocess",
    "urllib",
    "http",
    "socket",
    "ssl",
    "fcntl",
    "django",
    "rest_framework",
    "celery",
    "psycopg",
    "torch",
    "onnxruntime",
    "onnx",
    "sentence_transformers",
    "transformers",
    "memory.embedding",
    "memory.services",
    "memory.selectors",
    "memory.models",
)
# Engine modules allowed to do I/O: none (the embedding code moved to memory/embedding/, issue 42
# part 3). Do not add to this table: I/O goes outside memory/engine/.
ENGINE_ALLOWED: dict[str, str] = {}

# `cursor(` and `RawSQL(` by name or attribute; `.raw(` and `.execute(` as methods (a plain
# function named execute, like memory.tasks.execute, is not SQL).
SQL_NAMES = {"cursor", "RawSQL"}
SQL_METHODS = {"cursor", "raw", "execute", "RawSQL"}


@dataclass(frozen=True)
class Finding:
    path: str
    line: int
    rule: str
    message: str

    def __str__(self) -> str:
        return f"{self.path}:{self.line}: [{self.rule}] {self.message}"


def _in_sql_home(rel: str) -> bool:
    return any(rel == h or (h.endswith("/") and rel.startswith(h)) for h in SQL_HOMES)


def _sql_findings(rel: str, tree: ast.AST) -> list[Finding]:
    out = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        if isinstance(func, ast.Name) and func.id in SQL_NAMES:
            name = func.id
        elif isinstance(func, ast.Attribute) and func.attr in SQL_METHODS:
            if isinstance(func.value, ast.Name) and func.value.id == "statements":
                continue  # statements.execute(...): calling the home is the sanctioned form
            name = "." + func.attr
        else:
            continue
        out.append(
            Finding(
                rel,
                node.lineno,
                "sql",
                f"{name}( outside the SQL homes; put the statement in memory/statements.py "
                "(or a read query in memory/selectors/) and call statements.execute",
            )
        )
    return out


def _forbidden_module(name: str) -> str | None:
    return next(
        (m for m in ENGINE_FORBIDDEN_MODULES if name == m or name.startswith(m + ".")), None
    )


def _engine_findings(rel: str, tree: ast.AST) -> list[Finding]:
    out = []
    home = "; I/O belongs outside memory/engine/ (the engine takes its inputs as arguments)"
    for node in ast.walk(tree):
        bad: str | None = None
        if isinstance(node, ast.Import):
            bad = next((m for a in node.names if (m := _forbidden_module(a.name))), None)
            what = f"import {bad}"
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            # `from memory import services` names the forbidden module in the imported names
            named = (f"{node.module}.{a.name}" for a in node.names)
            bad = _forbidden_module(node.module) or next(
                (m for n in named if (m := _forbidden_module(n))), None
            )
            what = f"import from {bad}"
            if node.module == "os" and any(a.name in ("environ", "getenv") for a in node.names):
                bad, what = "os.environ", "from os import environ/getenv"
        elif (
            isinstance(node, ast.Attribute)
            and node.attr in ("environ", "getenv")
            and isinstance(node.value, ast.Name)
            and node.value.id == "os"
        ):
            bad, what = "os.environ", f"os.{node.attr}"
        if bad:
            out.append(Finding(rel, node.lineno, "engine-io", f"{what} in the engine{home}"))
    return out


def check(root: Path) -> list[Finding]:
    findings: list[Finding] = []
    offenders: set[str] = set()
    for package in PACKAGES:
        for path in sorted((root / package).rglob("*.py")):
            rel = path.relative_to(root).as_posix()
            tree = ast.parse(path.read_text(encoding="utf-8"), filename=rel)
            found = []
            if not _in_sql_home(rel):
                found += _sql_findings(rel, tree)
            if rel.startswith(ENGINE):
                found += _engine_findings(rel, tree)
            offenders |= {f"{f.rule}:{f.path}" for f in found}
            allowed = {("sql", r) for r in SQL_ALLOWED} | {("engine-io", r) for r in ENGINE_ALLOWED}
            findings += [f for f in found if (f.rule, f.path) not in allowed]
    for rule, table in (("sql", SQL_ALLOWED), ("engine-io", ENGINE_ALLOWED)):
        for rel in sorted(table):
            if f"{rule}:{rel}" not in offenders:
                findings.append(
                    Finding(rel, 0, rule, "allowlisted but keeps the rule (or is gone): remove it")
                )
    return findings


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tools.lint_rules", description=__doc__)
    parser.add_argument("--root", type=Path, default=ROOT, help="the tree to check")
    args = parser.parse_args(argv)
    findings = check(args.root)
    for finding in findings:
        print(finding, file=sys.stderr)
    if findings:
        print(
            f"{len(findings)} rule violation(s): docs/decisions/rules-as-checks.md", file=sys.stderr
        )
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
