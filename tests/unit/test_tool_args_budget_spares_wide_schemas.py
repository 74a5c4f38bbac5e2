"""A tool whose schema names many optional properties is checked, not refused as too
costly, however many records its arguments carry.

Rule: the step budget of an argument check (`engine.core.toolschema.check_budget`,
50,000 steps plus 4 a byte of the arguments) charges the work done: ``properties``
looks at the names an argument has among those the schema names (the fewer of the
two), so a record of one field costs a step or two whatever the schema's width,
and a legitimate call is never ``INVALID_ARGUMENT`` "too costly to check".

(Found in round 19: ``properties`` was charged the length of the schema's whole
list each time it applied, so records of a table with 60 optional columns, sent
as a few thousand partial rows ({"id": 1}), were refused as too costly to check —
a check that takes a few milliseconds.)
"""

from __future__ import annotations

from typing import Any

from engine.core.manifest import parse_manifest
from engine.core.tools import tool_args_problem
from tests.work import ReadDict


def _input(schema: dict[str, Any]) -> dict[str, Any]:
    manifest = parse_manifest({"name": "acme.t", "version": "1.0.0", "permissions": {},
                               "tools": [{"name": "t", "input": schema}]})
    tool = manifest.tool("t")
    assert tool is not None and tool.input is not None
    return tool.input


_COLUMNS = {"id": {"type": "integer"}, **{f"column_{i}": {"type": "string"} for i in range(60)}}
_TABLE = {"type": "object", "required": ["rows"], "properties": {"rows": {
    "type": "array", "items": {"type": "object", "required": ["id"], "properties": _COLUMNS,
                               "additionalProperties": False}}}}


def test_partial_rows_of_a_wide_table_are_checked() -> None:
    schema = _input(_TABLE)
    row = schema["properties"]["rows"]["items"]
    row["properties"] = columns = ReadDict(row["properties"])
    args: dict[str, Any] = {"rows": [{"id": i} for i in range(5_000)]}
    assert tool_args_problem(schema, args, 10**7) is None
    # The work is counted, not timed: the 61 columns are read whole a few times at
    # most, not once for each of the 5,000 rows.
    assert columns.reads <= 3, f"the 61 columns were read {columns.reads} times for 5,000 rows"
    # Checked, not waved through: a wrong row is named, and a wrong column of it.
    args["rows"][4_321] = {"id": 1, "column_7": 7}
    assert tool_args_problem(schema, args, 10**7) == ("args.rows[4321].column_7",
                                                      "7 is not of type 'string'")
    args["rows"][4_321] = {"id": 1, "colour": "red"}
    problem = tool_args_problem(schema, args, 10**7)
    assert problem is not None and problem[0] == "args.rows[4321]", problem


def test_the_schemas_order_decides_among_a_rows_wrong_columns() -> None:
    """Looked at from the row's side or the schema's, the same problem is named."""
    schema = _input(_TABLE)
    row = {"column_9": 9, "id": "one", "column_2": 2}
    wide = {"rows": [row]}
    assert tool_args_problem(schema, wide, 10**7) == ("args.rows[0].column_2",
                                                      "2 is not of type 'string'")
