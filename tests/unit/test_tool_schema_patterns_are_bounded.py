"""The patterns of a manifest's tool schemas are bounded in what compiling them costs.

Rule (SPEC §2 validation, §8 "No card can exhaust the store"; the spec names no number,
so the bounds are the engine's, each refused as MANIFEST_INVALID naming it):
- a pattern compiles to at most `MAX_INSTRUCTIONS` RE2 instructions (RE2 itself stops
  at 1 MiB a pattern, in place of its default 8 MiB);
- the patterns of one manifest compile to at most `MAX_PATTERN_INSTRUCTIONS` in all;
- one manifest holds at most `MAX_PATTERN_TEXT` characters of patterns, counted before
  any is compiled (by RE2, or by Python's ``re`` for the meta-schema's ``format: regex``).

(Found in round 35: ``[01]{1000}`` written 590 times over is a 5,900-character pattern
of 590,000 instructions; a manifest of 80 of them, within its 512 KiB, took 22 s to
offer, on the service's loop, and kept 420 MB of programs; 4,364 patterns of 9,000
instructions each took 20 s.)
"""

from __future__ import annotations

from typing import Any

import pytest

from engine.core import toolschema
from engine.core.errors import ManifestInvalid
from engine.core.manifest import parse_manifest
from engine.core.toolschema import MAX_INSTRUCTIONS, MAX_PATTERN_INSTRUCTIONS, MAX_PATTERN_TEXT

#: A pattern of about 1,000 instructions.
_THOUSAND = "[01]{1000}"


def _manifest(patterns: list[str], per_tool: int = 1) -> dict[str, Any]:
    tools = []
    for at in range(0, len(patterns), per_tool):
        mine = patterns[at:at + per_tool]
        tools.append({"name": f"t{at}", "input": {"type": "object", "properties": {
            f"p{i}": {"type": "string", "pattern": p} for i, p in enumerate(mine)}}})
    return {"name": "acme.re", "version": "1.0.0", "permissions": {}, "tools": tools}


def _problems(manifest: dict[str, Any]) -> list[tuple[str, str]]:
    with pytest.raises(ManifestInvalid) as refused:
        parse_manifest(manifest)
    return list(refused.value.problems)


def test_a_pattern_of_too_many_instructions_is_refused_naming_its_path() -> None:
    """Past `MAX_INSTRUCTIONS` a pattern is MANIFEST_INVALID; just under it, accepted."""
    assert MAX_INSTRUCTIONS == 10_000
    parse_manifest(_manifest([_THOUSAND * 9]))
    problems = _problems(_manifest([_THOUSAND * 11]))
    assert problems == [("$.tools[0].input.properties.p0.pattern",
                         "a pattern too large to match in bounded time: RE2 compiles it to "
                         "11,004 instructions, more than 10,000")]


def test_a_pattern_past_re2_s_memory_is_refused_and_not_kept() -> None:
    """One far past the bound stops RE2 at its memory and is kept by no cache."""
    kept = toolschema._regex.cache_info().currsize
    problems = _problems(_manifest([_THOUSAND * 590]))
    assert problems == [("$.tools[0].input.properties.p0.pattern",
                         "a pattern too large to match in bounded time: RE2 compiles it to "
                         "more than 10,000 instructions")]
    assert toolschema._regex.cache_info().currsize == kept


def test_the_patterns_of_a_manifest_are_bounded_in_all(monkeypatch: pytest.MonkeyPatch
                                                        ) -> None:
    """Patterns each under the bound, past `MAX_PATTERN_INSTRUCTIONS` together, are
    refused, and those past it are not compiled."""
    # GIVEN 40 tools, each with a pattern of about 9,000 instructions (360,000 in all)
    patterns = [f"{i}" + _THOUSAND * 9 for i in range(40)]
    compiled: list[str] = []
    real = toolschema._regex.__wrapped__

    def counted(pattern: str) -> Any:
        compiled.append(pattern)
        return real(pattern)

    monkeypatch.setattr(toolschema, "_regex", counted)
    # WHEN the manifest is offered
    problems = _problems(_manifest(patterns))
    # THEN the patterns past the budget are named, and were never compiled
    past = [where for where, what in problems if what.startswith("one pattern too many")]
    assert problems and len(past) == len(problems), problems
    assert len(past) == 40 - MAX_PATTERN_INSTRUCTIONS // 9_001, problems
    assert len(set(compiled)) == MAX_PATTERN_INSTRUCTIONS // 9_001 + 1


def test_a_manifest_of_too_much_pattern_text_is_refused_before_any_compiles(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """More than `MAX_PATTERN_TEXT` characters of patterns: refused at ``$.tools``
    unread by any regular expression engine."""
    patterns = [f"{i}" + _THOUSAND * 590 for i in range(6)]
    compiled: list[str] = []
    monkeypatch.setattr(toolschema, "_regex", compiled.append)
    problems = _problems(_manifest(patterns))
    text = sum(map(len, patterns))
    assert problems == [("$.tools", f"holds {text} characters of patterns in its input "
                                    f"schemas; a manifest at most {MAX_PATTERN_TEXT}")]
    assert compiled == []


def test_many_ordinary_patterns_are_accepted() -> None:
    """1,400 bounded patterns such as ``^[a-z0-9_-]{1,64}$`` fit one manifest."""
    patterns = [f"^[a-z0-9_-]{{1,{4 + i % 60}}}$" for i in range(1400)]
    manifest = parse_manifest(_manifest(patterns, per_tool=12))
    assert len(manifest.tools) == 117
