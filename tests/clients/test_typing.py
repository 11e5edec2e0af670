"""The client's methods are typed with the generated wire types: mypy (strict) accepts a correct
call, infers the answer's member types, and rejects a missing member, a wrong type and a value
outside an enum."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

CLIENT = Path(__file__).resolve().parents[2] / "clients" / "python"

SNIPPET = """
from spoke_memory_client import MemoryClient

client = MemoryClient("http://127.0.0.1:8000", "token")
answer = client.records.get(space_id="s1", record_id="rec_1")
reveal_type(answer["record"]["revision"])
client.records.get(space_id="s1")
client.records.get(space_id=1, record_id="rec_1")
client.records.create(
    space_id="s1", subject_id="u1", kind="fact", content={"text": "x"}, placement={"scope": "nowhere"}
)
for record in client.records.iter(space_id="s1"):
    reveal_type(record["content"]["text"])
"""


def test_mypy_checks_calls_against_the_wire_types(tmp_path):
    (tmp_path / "use.py").write_text(SNIPPET)
    done = subprocess.run(  # noqa: S603 (our own interpreter)
        [
            sys.executable,
            "-m",
            "mypy",
            "--strict",
            "--cache-dir",  # kept between runs (var/ is not committed): a cold run is slow
            str(CLIENT.parents[1] / "var" / "mypy-client-typing"),
            "--config-file",
            str(CLIENT / "pyproject.toml"),
            str(tmp_path / "use.py"),
        ],
        cwd=str(tmp_path),
        env={"PYTHONPATH": str(CLIENT), "PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
        timeout=600,
    )
    out = done.stdout
    assert 'Revealed type is "builtins.int"' in out, out
    assert 'Missing named argument "record_id"' in out, out
    assert 'Argument "space_id" to "get" of "RecordsOps" has incompatible type "int"' in out, out
    assert "expression has type \"Literal['nowhere']\"" in out, out
    assert 'Revealed type is "builtins.str"' in out, out
    assert done.returncode == 1 and out.count("error:") == 3, out
