"""q16: a large terminals.write into a real pty blocks the engine's event loop for good.

PtyTerminal.send does a blocking os.write of the whole text on the pty master
from inside the event loop. bash (readline) echoes what it reads back to the
master; nobody reads the master while the loop is stuck in os.write, so the
echo fills the pty, bash stops reading, and os.write never returns: every
engine call (and the whole `arrowgate serve`) hangs. The payload is well under
max_payload (256 KiB). Run in a child process so the hang cannot hang pytest.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

SCRIPT = textwrap.dedent('''
    import asyncio, json, sys, time
    from pathlib import Path
    from engine import Engine, World, file_digests
    from engine.effects.drivers import PtyTerminal

    async def main():
        d = Path(sys.argv[1]); ws = d / "ws"; ws.mkdir()
        e = Engine.open(d / "a.db", world=World(net=None, fs=None))
        await e.create_workspace("w1", ws)
        raw = {"name": "acme.t", "version": "1.0.0", "permissions": {"terminals.write": {}}}
        await e.offer("acme.t", raw, file_digests({
            "manifest.json": json.dumps(raw, sort_keys=True), "index.js": "x"}))
        await e.install("acme.t", grant="required")
        await e.add_node({"id": "c1", "type": "card", "package": "acme.t"}, workspace="w1")
        await e.add_node({"id": "t1", "type": "terminal", "name": "sh"}, workspace="w1")
        await e.add_arrow({"id": "e1", "from": "c1", "to": "t1"})
        await e.attach_driver("t1", PtyTerminal("t1"))
        await asyncio.sleep(0.5)  # bash's readline is now reading the terminal
        decision = await e.call("c1", "terminals.write", "t1", {"data": "x" * 200_000})
        print("write:", decision.outcome, flush=True)
        # The engine still answers other calls afterwards.
        await asyncio.sleep(0.2)
        print("alive:", (await e.call("c1", "agents.list")).outcome, flush=True)
        e.close()
        sys.exit(0)

    asyncio.run(main())
''')


def test_large_terminal_write_does_not_hang_the_engine(tmp_path: Path) -> None:
    """200 000 bytes typed into an idle bash (limit 256 KiB) must not freeze the engine."""
    try:
        done = subprocess.run([sys.executable, "-c", SCRIPT, str(tmp_path)], capture_output=True,
                              text=True, timeout=15, cwd=Path(__file__).parents[2])
    except subprocess.TimeoutExpired as exc:
        raise AssertionError(f"the engine hung in terminals.write (output so far: "
                             f"{exc.stdout!r})") from None
    assert done.returncode == 0, done.stderr
    assert "write: ok" in done.stdout
