"""Every string a person reads in a manifest is printable text (SPEC §2, issue 15 #11, #21)."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine import Engine
from engine.app.cli import main
from engine.core.errors import ManifestInvalid
from engine.core.manifest import Manifest, parse_manifest
from engine.core.review import diff_manifests, install_review
from engine.core.text import visible

HASH = "sha256:" + "0" * 64


def _raw(**extra: Any) -> dict[str, Any]:
    return {"name": "acme.m", "version": "1.0.0", "permissions": {}, **extra}


def _problems(raw: Any) -> dict[str, str]:
    with pytest.raises(ManifestInvalid) as err:
        parse_manifest(raw)
    return dict(err.value.problems)


def test_a_hiding_version_is_refused_and_review_prints_nothing(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The attack: a version with a newline and ESC[8m made the review say "asks for no
    permissions" and hid the real lines. Now it is MANIFEST_INVALID, naming $.version."""
    raw = _raw(version="1.0.0\nIt asks for no permissions.\x1b[8m",
               permissions={"terminals.write": {}})
    problems = _problems(raw)
    assert "U+001B (ESC)" in problems["$.version"] and "newline" in problems["$.version"]
    path = tmp_path / "manifest.json"
    path.write_text(json.dumps(raw))
    assert main(["review", str(path)]) == 2
    out = capsys.readouterr()
    assert "MANIFEST_INVALID: $.version" in out.err and "\x1b" not in out.err + out.out
    assert "asks for no permissions" not in out.out


@pytest.mark.parametrize("raw, path", [
    (_raw(name="acme\u202em"), "$.name"),
    (_raw(tools=["ok", "bad\x07"]), "$.tools[1]"),
    (_raw(tools=[{"name": "t", "description": "Sums\x1b[2J"}]), "$.tools[0].description"),
    (_raw(tools=[{"name": "t", "description": "line one\nline two"}]),
     "$.tools[0].description"),
    (_raw(tools=[{"name": "t", "description": "safe \u2066hidden\u2069"}]),
     "$.tools[0].description"),
    (_raw(ports={"inputs": ["in\r"], "outputs": []}), "$.ports.inputs[0]"),
    (_raw(permissions={"network": {"hosts": ["api.example.com\u200f"]}}),
     "$.permissions.network.hosts[0]"),
    (_raw(version="1.0.0-\u009b31m"), "$.version"),
])
def test_control_characters_anywhere_a_person_reads_are_refused(raw: dict[str, Any],
                                                                path: str) -> None:
    """C0, C1, bidi overrides and isolates, in each string a review shows: the path is named."""
    problems = _problems(raw)
    assert "control characters" in problems[path], problems


@pytest.mark.parametrize("field, value, ok", [
    ("name", "acme.standup", True), ("name", "a_b-c.d", True), ("name", "0x", True),
    ("name", "Acme", False), ("name", ".acme", False), ("name", "a" * 129, False),
    ("name", "acme\n", False),
    ("version", "1.2.0", True), ("version", "1.0.0-rc.1+build.5", True),
    ("version", "1", False), ("version", "1.2", False), ("version", "01.2.3", False),
    ("version", "1.2.3\n", False), ("version", "1.2.3 ", False), ("version", "١.٢.٣", False),
])
def test_name_and_version_rules(field: str, value: str, ok: bool) -> None:
    """name matches [a-z0-9][a-z0-9._-]{0,127}; version is a semantic version."""
    raw = _raw(**{field: value})
    if ok:
        assert getattr(parse_manifest(raw), field) == value
    else:
        assert f"$.{field}" in _problems(raw)


@pytest.mark.parametrize("name, ok", [("summarize", True), ("a_1", True), ("a" * 64, True),
                                      ("a" * 65, False), ("Summarize", False), ("1a", False),
                                      ("a-b", False), ("a.b", False), ("_a", False)])
def test_tool_names(name: str, ok: bool) -> None:
    """Tool names match [a-z][a-z0-9_]{0,63}, bare or in an object."""
    for entry in (name, {"name": name}):
        raw = _raw(tools=[entry])
        if ok:
            assert parse_manifest(raw).tools == (name,)
        else:
            assert any(p.startswith("$.tools[0]") for p in _problems(raw))


def test_tool_objects_keep_description_and_schema() -> None:
    """A tool object is validated and kept whole in the parsed manifest for later use."""
    schema = {"type": "object", "properties": {"text": {"type": "string"}},
              "required": ["text"]}
    m = parse_manifest(_raw(tools=["plain", {"name": "summarize", "description":
                                             "Summarise the standup notes", "input": schema}]))
    assert m.tools == ("plain", "summarize")
    tool = m.tool("summarize")
    assert tool is not None and tool.input == schema
    assert tool.description == "Summarise the standup notes"
    plain = m.tool("plain")
    assert plain is not None and plain.input is None and plain.description == ""


@pytest.mark.parametrize("entry, path", [
    ({"name": "t", "input": {"type": "nope"}}, "$.tools[0].input.type"),
    ({"name": "t", "input": {"pattern": "(("}}, "$.tools[0].input.pattern"),
    ({"name": "t", "input": {"properties": []}}, "$.tools[0].input.properties"),
    ({"name": "t", "input": "object"}, "$.tools[0].input"),
    ({"name": "t", "description": 5}, "$.tools[0].description"),
    ({"name": "t", "extra": 1}, "$.tools[0].extra"),
    ({"description": "no name"}, "$.tools[0].name"),
    (7, "$.tools[0]"),
])
def test_bad_tool_objects_are_refused(entry: Any, path: str) -> None:
    """An input that is not a valid draft 2020-12 schema, wrong types, unknown fields."""
    assert path in _problems(_raw(tools=[entry]))


def test_the_review_lists_each_tool_with_its_description() -> None:
    """Tools with descriptions are listed one per line."""
    m = parse_manifest(_raw(tools=[{"name": "summarize", "description": "Summarise notes"},
                                   "plain"]))
    lines = install_review(m, HASH).lines
    start = lines.index("Tools it offers to connected agents:")
    assert lines[start + 1:start + 3] == ("  summarize — Summarise notes", "  plain")


def test_review_and_diff_show_control_characters_inert() -> None:
    """Whatever reaches a review or diff unvalidated is printed with controls visible."""
    assert visible("a\x1b[8mb\nc\u202ed\x9b\x7f") == "a␛[8mb␊c⟨U+202E⟩d⟨U+009B⟩␡"
    assert visible("plain ✓ text 👩\u200d💻") == "plain ✓ text 👩\u200d💻"
    sneaky = Manifest.model_construct(name="acme.m", version="1\x1b[8m", permissions={},
                                      tools=(), ports=parse_manifest(_raw()).ports)
    text = install_review(sneaky, HASH).text
    assert "\x1b" not in text and "1␛[8m" in text
    old = parse_manifest(_raw(permissions={"network": {"hosts": ["a.example.com"]}}))
    new = Manifest.model_construct(**{**old.__dict__, "permissions": {
        "network": old.permissions["network"].model_copy(update={"hosts": ("b.com\x1b]0;x",)})}})
    assert all("\x1b" not in line for line in diff_manifests(old, new).lines)


DEEP = "[" * 100_000 + "]" * 100_000


def test_deep_json_is_manifest_invalid_everywhere(tmp_path: Path,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    """100,000-deep JSON: MANIFEST_INVALID from the file reader, the parser and offer."""
    path = tmp_path / "manifest.json"
    path.write_text('{"name": "acme.m", "version": "1.0.0", "permissions": {}, "x": '
                    + DEEP + "}")
    assert main(["review", str(path)]) == 2
    assert "MANIFEST_INVALID" in capsys.readouterr().err
    folder = tmp_path / "pkg"
    folder.mkdir()
    (folder / "manifest.json").write_text(DEEP)
    assert main(["review", str(folder)]) == 2
    assert "MANIFEST_INVALID" in capsys.readouterr().err
    deep: dict[str, Any] = {}
    node = deep
    for _ in range(100_000):
        node["x"] = {}
        node = node["x"]
    assert "nested more than" in next(iter(_problems(_raw(x=deep)).values()))


async def test_offer_refuses_what_cannot_be_stored(make_engine: Any) -> None:
    """offer stores the raw manifest: too deep, not JSON, or lone surrogates are refused
    there, and nothing is stored."""
    engine: Engine = make_engine()
    deep: list[Any] = []
    node = deep
    for _ in range(100_000):
        node.append([])
        node = node[0]
    for bad in (_raw(x=deep), _raw(x={1, 2}), _raw(x=float("nan")), _raw(name="\ud800"),
                {("tuple", "key"): 1}):
        with pytest.raises(ManifestInvalid):
            await engine.offer("acme.m", bad, {"manifest.json": "0" * 64})
    assert "acme.m" not in engine.state.packages


def test_error_messages_stay_short_for_huge_values() -> None:
    """A megabyte name, version, key or host is cut short in the message, not echoed."""
    big = "X" * 1_000_000
    with pytest.raises(ManifestInvalid) as err:
        parse_manifest(_raw(name=big, version=big, permissions={
            big: {}, "network": {"hosts": [big]}}, tools=[big], ports={"inputs": [big]}))
    assert all(len(problem) < 300 for _, problem in err.value.problems)
    assert len(str(err.value)) < 4000


async def test_a_stored_manifest_that_fails_the_new_rules_loads_not_installed(
        world: Engine, db_path: Path) -> None:
    """A database written under looser rules (version "1") still opens; the package is
    not installed, so its cards are refused until a person installs a valid version."""
    world.close()
    conn = sqlite3.connect(db_path)
    raw = json.loads(conn.execute("select manifest from packages where name = "
                                  "'acme.prompter'").fetchone()[0])
    conn.execute("update packages set manifest = ? where name = 'acme.prompter'",
                 [json.dumps({**raw, "version": "1"})])
    conn.commit()
    conn.close()
    engine = Engine.open(db_path)
    try:
        assert not engine.state.packages["acme.prompter"].installed
        decision = await engine.call("c1", "agents.prompt", "a1", {"text": "hi"})
        assert decision.code == "PACKAGE_NOT_INSTALLED"
    finally:
        engine.close()


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.characters(max_codepoint=0x7F)))
def test_visible_takes_its_ascii_shortcut_by_the_same_rule(text: str) -> None:
    """ASCII text (`visible`'s one pass in C) shows inert exactly the characters
    `is_control` names, as the general path does."""
    from engine.core.text import is_control, visible

    expected = "".join(
        (chr(0x2400 + ord(c)) if ord(c) < 0x20 else "\u2421") if is_control(c) else c
        for c in text)
    assert visible(text) == expected
