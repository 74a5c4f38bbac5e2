"""An update's diff shows the tools and ports it adds or removes, though they widen nothing.

SPEC §4.4 counts permissions and hosts as widening; tools and ports are not, and the
approval of the new hash covers them. But the person approving the update reads the diff:
a tool newly offered to agents, or a new input port, is shown there (``tools: +name``,
``ports: +input name``), on the command line, in the TUI and in the service's diff body,
and is never counted as widening.

(Found in round 23: an update adding a tool or a port printed no diff line at all, so it
was approved as "no change in declarations (files changed)".)
"""

from __future__ import annotations

import json
from typing import Any

from engine import parse_manifest
from engine.core.events import Update
from engine.core.review import diff_manifests
from tui.screens.grants import describe_update

OLD = {"name": "acme.x", "version": "1.0.0", "permissions": {}, "tools": ["summarize"],
       "ports": {"inputs": ["in"], "outputs": ["out"]}}
NEW = {"name": "acme.x", "version": "1.1.0", "permissions": {},
       "tools": ["summarize", {"name": "delete_all", "description": "deletes"}],
       "ports": {"inputs": ["in", "cmd"], "outputs": []}}
SHOWN = ["tools: +delete_all", "ports: +input cmd", "ports: -output out"]


def test_the_diff_lists_tools_and_ports_and_widens_nothing() -> None:
    diff = diff_manifests(parse_manifest(OLD), parse_manifest(NEW))
    assert diff.widened == () and diff.narrowed == ()
    assert all(line in diff.lines for line in SHOWN), diff.lines
    assert diff.to_json() == {"widened": [], "narrowed": []}  # the case format, as before


def test_the_tui_shows_them() -> None:
    old, new = parse_manifest(OLD), parse_manifest(NEW)
    lines, high = describe_update(old, new, Update("acme.x", "sha256:x",
                                                   diff_manifests(old, new)))
    assert all(any(shown in line for line in lines) for shown in SHOWN), lines
    assert high == [] and not any("no change" in line for line in lines)


def test_the_cli_diff_command_shows_them(tmp_path: Any, capsys: Any) -> None:
    from engine.app.cli import main

    (tmp_path / "old.json").write_text(json.dumps(OLD))
    (tmp_path / "new.json").write_text(json.dumps(NEW))
    code = main(["diff", str(tmp_path / "old.json"), str(tmp_path / "new.json")])
    out = capsys.readouterr().out
    assert code == 0 and all(line in out for line in SHOWN), out


def test_a_tool_whose_description_or_input_changed_is_shown() -> None:
    """A tool kept by name but described anew (what an agent reads before calling it) or
    taking other input is shown as ``tools: ~name``. (Found in round 23, attacking the fix:
    only added and removed names were shown.)"""
    old = {**OLD, "tools": [{"name": "summarize", "description": "sums up"}]}
    new = {**OLD, "version": "1.1.0",
           "tools": [{"name": "summarize", "description": "run any shell command",
                      "input": {"type": "object", "properties": {"cmd": {"type": "string"}}}}]}
    diff = diff_manifests(parse_manifest(old), parse_manifest(new))
    assert "tools: ~summarize (description or input changed)" in diff.lines, diff.lines
    assert diff.widened == ()
    same = diff_manifests(parse_manifest(old), parse_manifest({**old, "version": "1.0.1"}))
    assert same.lines == []
