"""What a web process makes as it loads (spokememory/warm.py), before its first request: here,
the parts of numpy the lexical head's first call would otherwise import at a recall's expense
(issue 49: the first recall after an import)."""

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

PROBE = """
import gc, sys, django
django.setup()
if {warm}:
    from spokememory.warm import freeze_loaded, warm_ranking
    warm_ranking()
    freeze_loaded()
print("numpy.ma" in sys.modules, "numpy" in sys.modules, gc.get_freeze_count() > 0)
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


def test_a_warmed_process_has_numpy_and_its_loaded_objects_frozen_before_any_recall():
    assert _probe(warm=False) == "False False False"  # Django alone imports neither
    assert _probe(warm=True) == "True True True"


def test_the_vector_load_pauses_the_collector_and_restores_it(monkeypatch, db):
    """The cache's full load reads its rows with the cyclic collector off, and leaves it as it
    found it (on, or off when something else had turned it off)."""
    import gc

    from memory.selectors import recall as reads
    from memory.services.vectors import cache
    from tests import factories

    space = factories.make_space("s1")
    admin, _ = factories.make_admin(space, "admin")
    factories.ensure_subjects(admin, "s1", ["u1"])
    subject = space.subjects.get(subject_id="u1")
    seen: list[bool] = []
    real = reads.stored_vectors

    def stored(*args, **kwargs):
        seen.append(gc.isenabled())
        return real(*args, **kwargs)

    monkeypatch.setattr(reads, "stored_vectors", stored)
    key = (subject.revision, 0, (384, "model"))
    assert gc.isenabled()
    cache._load(subject, key)
    assert seen == [False] and gc.isenabled()
    gc.disable()
    try:
        cache._load(subject, key)
        assert seen == [False, False] and not gc.isenabled()
    finally:
        gc.enable()
