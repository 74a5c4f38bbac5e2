"""`arrowgate log verify EXPORT` checks an exported log by the README's recipe, the file
alone: a person handed an export need not write the recipe to check it (newcomer31
tried `log verify FILE` and met argparse's "unrecognized arguments").

Every changed, dropped, reordered or cut row is a finding naming its line; the anchor
file, passed in, catches rows cut off the end; whatever the file holds is a finding,
never a traceback, and a line is never read past its bound.
"""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest

from engine.app import exportverify
from engine.app.cli import main
from engine.app.exportverify import verify_export
from engine.store.log import GENESIS, row_hash


async def _export(world: Any, db_path: Path, tmp_path: Path, capsys: Any) -> list[str]:
    """The world's log, with awkward payloads, exported; its lines."""
    await world.call("c1", "agents.prompt", "a1", {"text": "héllo ✓ \"q\" \\ \n\t\x1b[31m\x7f"})
    await world.call("c1", "agents.prompt", "a2", {"text": "no arrow"})
    await world.call("c1", "terminals.run", "t1", {"command": "echo 'ünïcode' | cat\r"})
    await world.call("c1", "agents.prompt", "a2", {"text": "é" * 5000})  # kept cut, with digest
    capsys.readouterr()
    assert main(["log", "export", "--db", str(db_path)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) >= 4
    return lines


def _verdict(path: Path | str, capsys: Any, *extra: str) -> tuple[int, dict[str, Any]]:
    code = main(["log", "verify", str(path), "--json", *extra])
    return code, json.loads(capsys.readouterr().out)


def _write(tmp_path: Path, lines: list[str], name: str = "export.jsonl") -> Path:
    path = tmp_path / name
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return path


async def test_a_whole_export_verifies_alone(world: Any, db_path: Path, tmp_path: Path,
                                             capsys: Any) -> None:
    lines = await _export(world, db_path, tmp_path, capsys)
    path = _write(tmp_path, lines)
    last = json.loads(lines[-1])
    # WHEN the export alone is verified
    code, verdict = _verdict(path, capsys)
    # THEN every row checks out, and the verdict names the last row to compare with an anchor
    assert code == 0
    assert verdict == {"ok": True, "rows": len(lines), "first_bad": None, "problem": None,
                       "last": {"seq": len(lines), "hash": last["chain"]["hash"]}}
    # AND the words say how to see that nothing is missing at its end
    assert main(["log", "verify", str(path)]) == 0
    out = capsys.readouterr().out
    assert f"ok: {len(lines)} rows" in out and last["chain"]["hash"] in out
    assert "--anchor" in out


async def test_a_changed_dropped_or_reordered_row_is_found_at_its_line(
        world: Any, db_path: Path, tmp_path: Path, capsys: Any) -> None:
    lines = await _export(world, db_path, tmp_path, capsys)
    changed = json.loads(lines[1])
    changed["input"]["payload"] = "evil"
    cases = {
        "changed": ([lines[0], json.dumps(changed), *lines[2:]], "does not hash"),
        "dropped": ([lines[0], *lines[2:]], "is row 3, not row 2"),
        "reordered": ([lines[1], lines[0], *lines[2:]], "is row 2, not row 1"),
    }
    for name, (tampered, words) in cases.items():
        code, verdict = _verdict(_write(tmp_path, tampered, f"{name}.jsonl"), capsys)
        assert code == 1, name
        first = 1 if name == "reordered" else 2
        assert verdict["first_bad"] == first and verdict["rows"] == first - 1, name
        assert words in verdict["problem"] and f"line {first} " in verdict["problem"], name


async def test_the_anchor_finds_rows_cut_off_the_end_or_a_rewritten_chain(
        world: Any, db_path: Path, tmp_path: Path, capsys: Any) -> None:
    lines = await _export(world, db_path, tmp_path, capsys)
    anchor = Path(str(db_path) + ".anchor")
    assert anchor.exists()
    # A whole export holds the row the anchor names.
    assert _verdict(_write(tmp_path, lines), capsys, "--anchor", str(anchor))[0] == 0
    # An export cut at its end verifies alone (the recipe cannot see it) ...
    cut = _write(tmp_path, lines[:2], "cut.jsonl")
    assert _verdict(cut, capsys)[0] == 0
    # ... and the anchor finds it.
    code, verdict = _verdict(cut, capsys, "--anchor", str(anchor))
    assert code == 1 and "missing at its end" in verdict["problem"]
    assert verdict["first_bad"] is None and verdict["rows"] == 2
    # A chain rewritten consistently (every hash made again) verifies alone; the anchor
    # finds it.
    prev, rewritten = GENESIS, []
    for number, line in enumerate(lines, start=1):
        record = json.loads(line)
        if number == 1:
            record["input"]["payload"] = "rewritten"
        row = {"seq": record["seq"], "t": record["timestamp"],
               "workspace": record["workspace"], **record["input"], **record["result"]}
        own = row_hash(prev, row)
        record["chain"] = {"prev": prev, "hash": own}
        record["decision_id"] = f"{number}-{own[:16]}"
        rewritten.append(json.dumps(record))
        prev = own
    forged = _write(tmp_path, rewritten, "forged.jsonl")
    assert _verdict(forged, capsys)[0] == 0
    code, verdict = _verdict(forged, capsys, "--anchor", str(anchor))
    assert code == 1 and "rewritten after the anchor" in verdict["problem"]


_GOOD = {"schema": "arrowgate.decision/1", "decision_id": "1-" + "a" * 16, "seq": 1,
         "timestamp": 1000.0, "workspace": "w1",
         "input": {"card": "c1", "package": "p", "version": "v", "call": "agents.prompt",
                   "target": "a1", "arrow": "e1", "payload": "x", "chain": ["c1", "a1"],
                   "payload_bytes": None, "payload_sha256": None},
         "result": {"outcome": "queued", "code": None, "reason": None, "approver": None,
                    "prompt": None},
         "chain": {"prev": GENESIS, "hash": "a" * 64}}


def _with(path: tuple[str, ...], value: Any) -> bytes:
    record = json.loads(json.dumps(_GOOD))
    where = record
    for key in path[:-1]:
        where = where[key]
    where[path[-1]] = value
    return json.dumps(record).encode()


@pytest.mark.parametrize("line", [
    b"", b"   ", b"[", b"{}", b'"text"', b"[1, 2]", b"\xff\xfe not utf-8",
    b"[" * 100_000, b"[" + b"0," * 5000 + b"0]", b'{"a": ' * 3000,
    _with(("schema",), "arrowgate.decision/2"),
    _with(("seq",), True), _with(("seq",), 1.0), _with(("seq",), 10 ** 100), _with(("seq",), 10 ** 4000),
    _with(("seq",), "1"), _with(("timestamp",), 1000), _with(("timestamp",), None),
    b'{"schema": "arrowgate.decision/1", "seq": 1, "timestamp": NaN}',
    _with(("input",), []), _with(("input", "card"), 7), _with(("input", "chain"), [1]),
    _with(("input", "chain"), "c1"), _with(("input", "payload_bytes"), -1),
    _with(("chain", "prev"), "0" * 63), _with(("chain", "hash"), "A" * 64),
    _with(("chain",), None), _with(("unreadable",), {"payload": "A\\xffB"}),
    json.dumps(_GOOD).encode(),  # well formed, but its hash is not its row's
])
def test_whatever_a_line_holds_is_a_finding_naming_it(line: bytes) -> None:
    verdict = verify_export(io.BytesIO(line + b"\n"))
    assert not verdict.ok and verdict.first_bad == 1 and verdict.rows == 0
    assert verdict.problem is not None and verdict.problem.startswith("line 1 ")
    assert len(verdict.problem) < 400  # a message a person reads, whatever the line held


class _Counting(io.BytesIO):
    """A stream that counts the bytes handed out."""

    handed = 0

    def readline(self, size: int | None = -1) -> bytes:
        line = super().readline(size)
        self.handed += len(line)
        return line


def test_a_line_past_the_bound_is_not_read_whole(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(exportverify, "MAX_LINE", 1000)
    stream = _Counting(b"x" * 50_000 + b"\n")
    verdict = verify_export(stream)
    assert not verdict.ok and verdict.first_bad == 1
    assert verdict.problem is not None and "longer than" in verdict.problem
    assert stream.handed <= 1001


def test_standard_input_is_read_with_a_dash(monkeypatch: pytest.MonkeyPatch,
                                            capsys: Any) -> None:
    class _Stdin:
        buffer = io.BytesIO(b"")

    monkeypatch.setattr("sys.stdin", _Stdin())
    # An empty export is a log of no rows: nothing to find.
    assert main(["log", "verify", "-", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["rows"] == 0


def test_an_export_with_a_store_option_or_a_bad_path_is_a_usage_error(
        tmp_path: Path, capsys: Any) -> None:
    export = _write(tmp_path, [])
    for argv, words in (
            (["log", "verify", str(export), "--db", str(tmp_path / "x.db")], "checked alone"),
            (["log", "verify", "--anchor", str(tmp_path / "a")], "goes with EXPORT"),
            (["log", "verify", str(tmp_path)], "is a folder"),
            (["log", "verify", str(tmp_path / "missing.jsonl")], "cannot read"),
            (["log", "verify", str(export), "--anchor", str(tmp_path / "none")],
             "no anchor file")):
        assert main(argv) == 2, argv
        assert words in capsys.readouterr().err, argv
    # Nothing was made on the way.
    assert sorted(p.name for p in tmp_path.iterdir()) == ["export.jsonl"]
