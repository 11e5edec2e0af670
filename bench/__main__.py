"""`python -m bench [name ...]`: run every bench module present (or the named ones), in name
order, each through its `main()`. Fault scripts (`faults_*`) run only when named:
`faults_kill` (SIGKILL of gunicorn mid-request) and `faults_pg_restart` (PostgreSQL stopped and
started under load, in a throwaway cluster of its own; see docs/reliability.md)."""

import importlib
import pkgutil
import sys
from pathlib import Path

HELPERS = {"urls", "dashboard_shot"}  # dashboard_shot: the docs' screenshot, run when named


def modules() -> list[str]:
    here = Path(__file__).parent
    names = [m.name for m in pkgutil.iter_modules([str(here)]) if not m.name.startswith("_")]
    return sorted(n for n in names if n not in HELPERS and not n.startswith("faults_"))


def main(argv: list[str]) -> int:
    chosen = argv or modules()
    failed = []
    for name in chosen:
        module = importlib.import_module(f"bench.{name}")
        if not hasattr(module, "main"):
            continue
        print(f"== bench.{name}", flush=True)
        try:
            module.main()
        except Exception as exc:  # noqa: BLE001 - one broken bench must not hide the others
            print(f"bench.{name} failed: {type(exc).__name__}: {exc}", flush=True)
            failed.append(name)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
