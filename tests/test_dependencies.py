"""Issue 13, item 5: every import is declared. A fresh venv holds only what pyproject.toml asks
for (and what that asks for, transitively); the Celery worker once crashed at start on Redis
because kombu's Redis transport imports `packaging`, which nothing declared. Two checks: every
third-party module the project's code imports, and every module loaded by a worker's start-up on
the Redis transport, comes from a declared distribution."""

from __future__ import annotations

import ast
import importlib.metadata as md
import json
import os
import re
import subprocess
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FIRST_PARTY = {"memory", "reviews", "spokememory", "tests", "bench"}
# optional extras whose code is imported only when the extra is chosen (pyproject comments)
EXTRAS = ("semantic",)


def _name(requirement: str) -> tuple[str, set[str]]:
    head = re.split(r"[<>=!~;\s]", requirement, maxsplit=1)[0]
    extras = set(re.findall(r"\[([^\]]*)\]", head)[0].split(",")) if "[" in head else set()
    return re.sub(r"[-_.]+", "-", head.split("[")[0]).lower(), {e.strip() for e in extras}


def _closure(requirements: list[str]) -> set[str]:
    """Every distribution a fresh `pip install` of these requirements brings (markers of this
    interpreter and the requested extras honoured)."""
    from packaging.requirements import Requirement

    seen: set[str] = set()
    todo = [(r, set()) for r in requirements]
    while todo:
        text, _ = todo.pop()
        req = Requirement(text)
        name = re.sub(r"[-_.]+", "-", req.name).lower()
        key = name + "[" + ",".join(sorted(req.extras)) + "]"
        if key in seen:
            continue
        seen.add(key)
        try:
            requires = md.requires(name) or []
        except md.PackageNotFoundError:
            continue
        for sub in requires:
            subreq = Requirement(sub)
            envs = [{"extra": e} for e in (req.extras or {""})]
            if subreq.marker is None or any(subreq.marker.evaluate(env) for env in envs):
                todo.append((sub, set()))
    return {k.split("[")[0] for k in seen}


def declared(extras: tuple[str, ...] = EXTRAS) -> set[str]:
    """What `pip install '.[extras]'` brings into a fresh venv."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    requirements = list(project["dependencies"])
    for extra in extras:
        requirements += project["optional-dependencies"][extra]
    return _closure(requirements)


def _distributions(module: str) -> set[str]:
    return {re.sub(r"[-_.]+", "-", d).lower() for d in md.packages_distributions().get(module, [])}


def _undeclared(modules: set[str]) -> dict[str, set[str]]:
    allowed = declared()
    out = {}
    for module in sorted(modules):
        if module in sys.stdlib_module_names or module in FIRST_PARTY or module.startswith("_"):
            continue
        dists = _distributions(module)
        if dists and not dists & allowed:
            out[module] = dists
    return out


def test_every_module_the_code_imports_is_declared():
    modules: set[str] = set()
    for package in ("memory", "reviews", "spokememory"):
        for path in (ROOT / package).rglob("*.py"):
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if isinstance(node, ast.Import):
                    modules |= {a.name.split(".")[0] for a in node.names}
                elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                    modules.add(node.module.split(".")[0])
    assert _undeclared(modules) == {}


# A fresh venv, simulated: this interpreter's site-packages minus every distribution
# pyproject.toml does not bring. A sitecustomize (on PYTHONPATH) refuses their imports as if
# they were not installed; optional imports (try/except ImportError) degrade as they would.
SITECUSTOMIZE = """
import importlib.abc, json, os
BLOCKED = set(json.loads(os.environ["SPOKE_TEST_UNDECLARED"]))
class Undeclared(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in BLOCKED:
            raise ModuleNotFoundError(f"No module named {name!r} (undeclared)", name=name)
        return None
import sys
sys.meta_path.insert(0, Undeclared())
"""


def fresh_venv_env(tmp_path: Path, **extra: str) -> dict:
    """A production install: `pip install .`, no extras."""
    allowed = declared(())
    blocked = sorted(
        module
        for module, dists in md.packages_distributions().items()
        if module not in FIRST_PARTY
        and module not in sys.stdlib_module_names
        and not {re.sub(r"[-_.]+", "-", d).lower() for d in dists} & allowed
    )
    (tmp_path / "sitecustomize.py").write_text(SITECUSTOMIZE)
    env = {**os.environ, **extra}
    env["PYTHONPATH"] = os.pathsep.join([str(tmp_path), str(ROOT)])
    env["SPOKE_TEST_UNDECLARED"] = json.dumps(blocked)
    env.pop("DATABASE_URL", None)
    # a production install without extras serves engine/2 (its default; the probe that picks it
    # finds no extra there, where this hook would refuse the probe itself), not the engine the
    # suite's leg picked for this process (tests/pytest_env.py)
    env["SPOKE_MEMORY_ENGINE"] = "engine/2"
    return env


WORKER_IMPORTS = """
import django
django.setup()
from spokememory.celery import app
import kombu.transport.redis  # the transport a worker on redis:// loads
import celery.apps.worker, celery.worker.consumer, celery.beat
app.loader.import_default_modules()
print(app.connection_for_write().transport.driver_name)
"""


def test_a_worker_on_redis_starts_with_only_declared_distributions(tmp_path):
    env = fresh_venv_env(tmp_path, CELERY_BROKER_URL="redis://127.0.0.1:6379/15")
    out = subprocess.run(
        [sys.executable, "-c", WORKER_IMPORTS],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
    )
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.strip().endswith("redis")
    # the simulated fresh venv does refuse what is not declared
    probe = subprocess.run(
        [sys.executable, "-c", "import pytest"], env=env, capture_output=True, text=True
    )
    assert probe.returncode != 0 and "undeclared" in probe.stderr
