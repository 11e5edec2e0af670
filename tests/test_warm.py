"""What a web process makes as it loads (spokememory/warm.py), before its first request: here,
the parts of numpy the lexical head's first call would otherwise import at a recall's expense
(issue 49: the first recall after an import)."""

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

PROBE = """
import sys, django
django.setup()
if {warm}:
    from spokememory.warm import warm_ranking
    warm_ranking()
print("numpy.ma" in sys.modules, "numpy" in sys.modules)
"""


def _probe(warm: bool) -> str:
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "spokememory.settings"}
    env.setdefault("SECRET_KEY", "test-only-secret-key-for-the-warm-probe")
    done = subprocess.run(  # noqa: S603 - this interpreter, a fixed program
        [sys.executable, "-c", PROBE.format(warm=warm)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    return done.stdout.strip().splitlines()[-1]


def test_a_warmed_process_has_numpy_and_numpy_ma_before_any_recall():
    assert _probe(warm=False) == "False False"  # Django alone imports neither
    assert _probe(warm=True) == "True True"
