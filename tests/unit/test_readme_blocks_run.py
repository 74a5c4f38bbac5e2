"""The README's code blocks that the other README tests do not run, run as written: the
drivers and the tools blocks (Python that goes on from the first example's engine), and
the service's ``curl`` against ``arrowgate serve --db app.db`` started as the README
starts it. (The first Python block: `tests/unit/test_cli.py`; the agent's wiring:
`tests/service/test_readme_wires_your_own_agent.py`; the TypeScript block: its tests.)

(Round 31: a newcomer who followed "Agents calling card tools" with a manifest whose
``tools`` were names, as the manifest table said, had ``search`` refused its arguments;
and the drivers block's ``start_drivers`` printed ``running`` where its comment said
``started``.)
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
README = (ROOT / "README.md").read_text()
ARROWGATE = [sys.executable, "-m", "engine.app.cli"]


def _blocks(kind: str) -> list[str]:
    """The README's fenced blocks of ``kind`` (``python``, ``sh``), in order."""
    return [part.split("```", 1)[0] for part in README.split(f"```{kind}\n")[1:]]


def _block(kind: str, holding: str) -> str:
    (found,) = [b for b in _blocks(kind) if holding in b]
    return found


#: The engine the blocks go on from (the first example's, with what they name: the
#: terminal t1, the agent a2, and the card's tool ``search``, declared as the manifest
#: table says a tool that takes arguments is), then each block as the body of a
#: coroutine given ``engine``.
_SCRIPT = '''
import asyncio, json, sys
from engine import Engine, file_digests

MANIFEST = {"name": "acme.standup", "version": "1.0.0",
            "permissions": {"agents.prompt": {}},
            "tools": [{"name": "search", "description": "search the stand-up notes",
                       "input": {"type": "object",
                                 "properties": {"query": {"type": "string"}}}}]}

async def drivers(engine):
%(drivers)s

async def tools(engine):
%(tools)s

async def main():
    engine = Engine.open("arrowgate.db")
    await engine.open_workspace("w1", %(folder)r)
    await engine.offer("acme.standup", MANIFEST,
                       file_digests({"manifest.json": json.dumps(MANIFEST)}))
    await engine.install("acme.standup", by="operator")
    await engine.add_node({"id": "c1", "type": "card", "package": "acme.standup"},
                          workspace="w1")
    for node in ({"id": "a1", "type": "agent", "name": "Builder"},
                 {"id": "a2", "type": "agent", "name": "Helper"},
                 {"id": "t1", "type": "terminal"}):
        await engine.add_node(node, workspace="w1")
    await engine.add_arrow({"id": "e1", "from": "c1", "to": "a1"})
    try:
        # The drivers block ends reading the card's events, which never end by themselves.
        await asyncio.wait_for(drivers(engine), 0.5)
    except TimeoutError:
        print("still reading events")
    await tools(engine)
    print(json.dumps([[r["call"], r["outcome"]] for r in engine.log_rows(arrow="e1")]))
    engine.close()

asyncio.run(main())
'''


def test_the_drivers_and_tools_blocks_run_on_the_first_examples_engine(tmp_path: Path) -> None:
    """The drivers block attaches and starts the drivers and reads the card's events; the
    tools block calls, answers and waits for a tool call: both as written."""
    # GIVEN the two blocks, as the README shows them, and the manifest table's word on
    # how a tool takes arguments (the setup below declares ``search`` so)
    drivers = _block("python", "engine.attach_driver(")
    tools = _block("python", "engine.tool(")
    (tools_row,) = [line for line in README.splitlines() if line.startswith("| `tools` |")]
    assert '"input"' in tools_row and "JSON Schema of its arguments" in tools_row, tools_row
    script = _SCRIPT % {"drivers": textwrap.indent(drivers, "    "),
                        "tools": textwrap.indent(tools, "    "), "folder": str(tmp_path)}
    # WHEN they run (a real bash for t1: about a second)
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          cwd=tmp_path, timeout=120)
    # THEN what they print is what the README's comments say
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    started = next(line for line in lines if line.startswith("{"))
    assert started == "{'a1': 'running', 'a2': 'running', 't1': 'running'}", lines
    assert "# {'a1': 'running', ...}" in drivers
    assert "still reading events" in lines
    # AND the tool call and its one answer are two rows on the arrow
    assert json.loads(lines[-1]) == [["tool:search", "ok"], ["tool:search", "answered"]]


@pytest.fixture
def short_folder() -> Iterator[Path]:
    """A folder whose socket path stays within the 107 bytes a Unix socket may have."""
    folder = Path(tempfile.mkdtemp(prefix="ag-readme-"))
    try:
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)


#: A person at the terminal, for the README's set-up block: the write verbs with the
#: operator check passing (a test has no person; `tests/unit/test_operator.py` plays it).
_PERSON = """
import sys
import engine.app.cli_write
from engine.effects.operator import OperatorCheck
engine.app.cli_write.operator_check = lambda: OperatorCheck(True)
from engine.app.cli import main
sys.exit(main(sys.argv[1:]))
"""


@pytest.mark.skipif(shutil.which("curl") is None, reason="needs curl")
def test_the_services_curl_block_answers_a_decision(short_folder: Path) -> None:
    """``arrowgate serve --db app.db`` as the README starts it, then its set-up block (a
    person answering y) and its curl block run by a shell in the same folder: the call is
    queued on the arrow the set-up drew.

    (Round 34: the curl block named c1 and a1 on the new, empty canvas, and a newcomer who
    ran it was answered CARD_UNKNOWN, with no word on how to make them.)"""
    # GIVEN the service, started as the README's first serve line says
    serve_line = _block("sh", "arrowgate serve --db app.db ").splitlines()[0]
    argv = serve_line.split("#", 1)[0].split()
    assert argv[:4] == [".venv/bin/arrowgate", "serve", "--db", "app.db"], argv
    proc = subprocess.Popen([*ARROWGATE, *argv[1:]], cwd=short_folder, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            env={**os.environ, "HOME": str(short_folder)})
    try:
        assert proc.stdout is not None
        assert proc.stdout.readline().strip() == "app.db.serve/serve.sock"
        assert proc.stdout.readline().strip() == "ready"
        # WHEN the set-up block runs there, a person answering y to the install's question
        (short_folder / "person.py").write_text(_PERSON)
        setup = _block("sh", "arrowgate workspace add w1 ")
        assert setup.count(".venv/bin/arrowgate ") == 6, setup
        setup = setup.replace(".venv/bin/arrowgate ", f"{sys.executable} person.py ")
        made = subprocess.run(["bash", "-e", "-c", setup], cwd=short_folder, input="y\n",
                              capture_output=True, text=True, timeout=120)
        assert made.returncode == 0, made.stdout + made.stderr
        # AND the curl block after it
        curl = _block("sh", "curl --unix-socket")
        done = subprocess.run(["bash", "-c", curl], cwd=short_folder, capture_output=True,
                              text=True, timeout=60)
    finally:
        proc.terminate()
        proc.communicate(timeout=30)
    # THEN the answer is the call's Decision: queued to a1 over the arrow e1
    assert done.returncode == 0, done.stderr
    decision = json.loads(done.stdout)
    assert (decision["outcome"], decision["arrow"]) == ("queued", "e1"), decision
