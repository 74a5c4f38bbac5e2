"""The committed JSON Schemas match the pydantic models, and the models match the engine."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from pydantic import TypeAdapter, ValidationError

from engine.app.cli import main
from engine.app.demo import load_demo
from engine.app.export import decision_record
from engine.app.schemas import ArrowModel, DecisionModel, DecisionRecord, NodeModel, render, schemas

ROOT = Path(__file__).resolve().parents[2]
NODES: TypeAdapter[Any] = TypeAdapter(NodeModel)


def test_committed_schemas_match_the_models() -> None:
    """schemas/*.json is exactly what `arrowgate docs schemas` generates (regenerate on drift)."""
    generated = schemas()
    committed = {p.name: p.read_text() for p in (ROOT / "schemas").glob("*.json")}
    assert set(committed) == set(generated), "run `arrowgate docs schemas --out schemas`"
    for name, schema in generated.items():
        assert committed[name] == render(schema), \
            f"schemas/{name} drifted: run `arrowgate docs schemas --out schemas`"


def test_docs_schemas_writes_the_files(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The one command writes every schema and names the files."""
    assert main(["docs", "schemas", "--out", str(tmp_path / "out")]) == 0
    written = sorted(p.name for p in (tmp_path / "out").iterdir())
    assert written == sorted(schemas()) and "manifest.json" in capsys.readouterr().out


def test_manifest_schema_names_the_catalogue() -> None:
    """The manifest schema lists the permission names a manifest may declare."""
    names = schemas()["manifest.json"]["properties"]["permissions"]["propertyNames"]["enum"]
    assert "agents.prompt" in names and "network" in names


async def test_models_accept_what_the_engine_accepts(world: Any) -> None:
    """Nodes, arrows, decisions and log records of a real run validate against the models."""
    demo = load_demo()
    for node in demo.nodes:
        NODES.validate_python(node)
    for arrow in demo.arrows:
        ArrowModel.model_validate(arrow)
    for node in world.state.canvas.nodes("w1"):
        NODES.validate_python({k: v for k, v in node.to_dict().items()
                               if k not in ("screen", "last_reply", "exit", "chain")})
    decisions = [await world.call("c1", "agents.prompt", "a1", {"text": "hi"}),
                 await world.call("c1", "agents.prompt", "a2", {"text": "hi"}),
                 await world.call("c1", "terminals.run", "t1", {"command": "make"})]
    for d in decisions:
        DecisionModel.model_validate(d.to_json())
    for row in world.log_rows():
        DecisionRecord.model_validate(decision_record(row))


@pytest.mark.parametrize("bad", [
    {"id": "x", "type": "robot"},
    {"id": "x", "type": "agent", "status": "sleeping"},
    {"id": "x", "type": "terminal", "shell": "zsh"},
    {"id": "x", "type": "card"},
    {"id": "x", "type": "note", "colour": "red"},
])
def test_models_refuse_what_the_engine_refuses(bad: dict[str, Any]) -> None:
    """A node the engine refuses does not validate against the schema either."""
    from canvas import Node
    from canvas.errors import InvalidNode

    with pytest.raises(InvalidNode):
        Node.build(bad, "w1")
    with pytest.raises(ValidationError):
        NODES.validate_python(bad)


def test_schema_files_are_json_schema_2020_12() -> None:
    """Every committed file declares its draft and parses as JSON."""
    for path in (ROOT / "schemas").glob("*.json"):
        doc = json.loads(path.read_text())
        assert doc["$schema"] == "https://json-schema.org/draft/2020-12/schema"


def test_the_manifest_schema_takes_tools_as_names_and_objects() -> None:
    """SPEC §2: a tool is a name, or ``{"name", "description", "input"}``; the published
    schema says both (it took only names, refusing manifests the engine installs)."""
    import jsonschema

    from engine.core.manifest import parse_manifest

    raw = {"name": "acme.tools", "version": "1.0.0", "permissions": {},
           "tools": ["ping", {"name": "search", "description": "Search the notes.",
                              "input": {"type": "object",
                                        "properties": {"q": {"type": "string"}}}}]}
    parse_manifest(raw)  # the engine takes it
    jsonschema.validate(raw, schemas()["manifest.json"])
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({**raw, "tools": ["Bad Name"]}, schemas()["manifest.json"])
