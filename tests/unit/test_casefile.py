"""Case files (FORMAT.md): an invalid case is refused whole, names what is wrong, writes nothing.

Issue 13 ("The case format, completed") and issue 15 items 1, 15 and 21 (the
case-file part).
"""

from __future__ import annotations

import copy
import json
import os
import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engine import CaseInvalid
from engine.app.casefile import CaseFiles, load_case, write_files
from engine.app.cli import main
from engine.app.replay import run_case

CASES = Path(__file__).resolve().parents[1] / "conformance" / "cases"


def _base() -> dict[str, Any]:
    return json.loads((CASES / "revoke.json").read_text())


@pytest.fixture
def scratch(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Where the replay makes its temporary folders; a test checks it stays empty."""
    folder = tmp_path / "scratch"
    folder.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(folder))
    return folder


def _write(tmp_path: Path, case: dict[str, Any] | str, name: str = "case.json") -> Path:
    path = tmp_path / name
    path.write_text(case if isinstance(case, str) else json.dumps(case))
    return path


def _replay(capsys: pytest.CaptureFixture[str], *paths: Path) -> tuple[int, str, str]:
    code = main(["replay", *map(str, paths)])
    captured = capsys.readouterr()
    assert "Traceback" not in captured.out + captured.err
    return code, captured.out, captured.err


# --------------------------------------------------------------------------- files


@pytest.mark.parametrize("files, fragment", [
    ({"../x": "pwned"}, "has a '..' component"),
    ({"a/../../x": "pwned"}, "has a '..' component"),
    ({"": "pwned"}, "non-empty path"),
    ({".": "pwned"}, "names the case's folder itself"),
    ({"a" * 256: "long"}, "has a name longer than 255 bytes"),
    ({"ok.txt": 5}, 'must be the file\'s text or {"symlink": "target"}'),
    ({"l": {"symlink": ""}}, "must be the file's text"),
])
def test_files_that_leave_the_folder_are_refused(tmp_path, scratch, capsys, files,
                                                 fragment) -> None:
    """A files key with '..' (or otherwise unusable) refuses the case; nothing is written."""
    case = _base()
    case["files"] = files
    path = _write(tmp_path, case)
    code, out, err = _replay(capsys, path)
    assert code == 2 and fragment in err and f"{path}: field 'files." in err
    assert "replay: 0 passed, 1 failed" in out
    assert list(scratch.iterdir()) == []  # not even the case's temporary folder
    assert not (tmp_path / "x").exists()


def test_an_absolute_files_key_is_refused_and_nothing_written(tmp_path, scratch,
                                                              capsys) -> None:
    """An absolute files key is refused; the file it names is never created."""
    target = tmp_path / "abs.txt"
    case = _base()
    case["files"] = {"README.md": "fine", str(target): "pwned"}
    code, _out, err = _replay(capsys, _write(tmp_path, case))
    assert code == 2 and "is absolute" in err and str(target) in err
    assert not target.exists() and list(scratch.iterdir()) == []


@pytest.mark.parametrize("order", ["link first", "file first"])
def test_a_file_through_a_symlink_of_the_case_is_refused(tmp_path, scratch, capsys,
                                                         order) -> None:
    """'d' a symlink to a folder outside, then 'd/f': refused, nothing written anywhere."""
    outside = tmp_path / "somewhere"
    outside.mkdir()
    entries = [("d", {"symlink": str(outside)}), ("d/f", "pwned")]
    if order == "file first":
        entries.reverse()
    case = _base()
    case["files"] = dict(entries)
    code, _out, err = _replay(capsys, _write(tmp_path, case))
    assert code == 2 and "would be written through 'd', which is a symbolic link" in err
    assert "field 'files.d/f'" in err
    assert list(outside.iterdir()) == [] and list(scratch.iterdir()) == []


def test_a_symlink_of_its_own_is_kept_as_written(tmp_path, scratch) -> None:
    """A symlink entry alone is made as written (the engine must refuse to follow it)."""
    case = _base()
    case["files"] = {"out": {"symlink": "../elsewhere"}, "docs/a.md": "a", "docs/b.md": "b"}
    _raw, files = load_case(_write(tmp_path, case))
    folder = tmp_path / "ws"
    folder.mkdir()
    write_files(folder, files)
    assert os.readlink(folder / "out") == "../elsewhere"
    assert (folder / "docs" / "b.md").read_text() == "b"


def test_write_files_never_follows_a_planted_symlink(tmp_path) -> None:
    """Files are made under an opened folder with O_NOFOLLOW: a planted link is an error."""
    outside = tmp_path / "outside"
    outside.mkdir()
    folder = tmp_path / "ws"
    folder.mkdir()
    (folder / "d").symlink_to(outside)
    (folder / "f").symlink_to(outside / "f")
    with pytest.raises(OSError):
        write_files(folder, CaseFiles(((("d", "x"), "pwned", False),)))
    with pytest.raises(OSError):
        write_files(folder, CaseFiles(((("f",), "pwned", False),)))
    assert list(outside.iterdir()) == []


def test_a_case_folder_that_is_a_symlink_is_refused(tmp_path) -> None:
    """The folder itself is opened with O_NOFOLLOW too."""
    outside = tmp_path / "outside"
    outside.mkdir()
    (tmp_path / "ws").symlink_to(outside)
    with pytest.raises(OSError):
        write_files(tmp_path / "ws", CaseFiles(((("f",), "pwned", False),)))
    assert list(outside.iterdir()) == []


# --------------------------------------------------------------------------- numbers


def test_a_nan_t_is_refused_with_the_step_and_field(tmp_path, scratch, capsys) -> None:
    """t: NaN (Python's json reads it) is invalid: a hold with a NaN deadline never expires."""
    text = json.dumps(_base())[:-2] + ', {"do": "log", "t": NaN}]}'
    path = _write(tmp_path, text)
    code, _out, err = _replay(capsys, path)
    assert code == 2
    assert f"{path}: step 5 (log) field 't': must be a finite number" in err
    assert list(scratch.iterdir()) == []


@pytest.mark.parametrize("setting, raw", [
    ("hold_timeout", "NaN"), ("fetch_timeout", "Infinity"), ("tool_timeout", "-1"),
    ("max_payload", '"big"'), ("denial_log_limit", "1.5"), ("fs_max_bytes", "true"),
    ("fetch_max_bytes", "0"), ("budget", "[60, NaN]"), ("colour", "1"),
])
def test_settings_are_checked_before_the_case_runs(tmp_path, scratch, capsys, setting,
                                                   raw) -> None:
    """A setting of the wrong type, non-finite or out of range: invalid, naming the setting."""
    text = json.dumps(_base())[:-1] + f', "settings": {{"{setting}": {raw}}}}}'
    code, _out, err = _replay(capsys, _write(tmp_path, text))
    assert code == 2 and "field 'settings'" in err and repr(setting) in err
    assert list(scratch.iterdir()) == []


def test_nan_in_any_other_field_is_refused(tmp_path, capsys) -> None:
    """A NaN anywhere (call arguments, node layout) is not JSON: refused with its place."""
    text = json.dumps(_base())[:-2] + (', {"do": "call", "card": "c1", "call": "fs.stat", '
                                       '"args": {"path": NaN}}]}')
    code, _out, err = _replay(capsys, _write(tmp_path, text))
    assert code == 2 and "step 5 (call) field 'args.path': must be a finite number" in err


# --------------------------------------------------------------------------- types and refs


def _step(case: dict[str, Any], step: dict[str, Any]) -> None:
    case["steps"].append(step)


@pytest.mark.parametrize("mutate, fragment", [
    (lambda c: c["steps"][0].update(card=5), "step 0 (call) field 'card': must be a string"),
    (lambda c: c["steps"][0].update(args=["x"]), "step 0 (call) field 'args': must be an object"),
    (lambda c: c["steps"][0].update(expect={"held": "yes"}),
     "step 0 (call) field 'expect.held': must be true or false"),
    (lambda c: c["steps"][0].update(expect={"retry_after": "soon"}),
     "field 'expect.retry_after': must be a number"),
    (lambda c: c["steps"][0].update(expect={"colour": 1}),
     "field 'expect.colour': is not a field"),
    (lambda c: c["steps"][0].update(t=True), "step 0 (call) field 't': must be a number"),
    (lambda c: c["steps"][0].update(t=-1), "field 't': must be greater than or equal to 0"),
    (lambda c: c["steps"][0].update(bind="1x"), "field 'bind'"),
    (lambda c: c.update(nodes={}), "field 'nodes': must be a list"),
    (lambda c: c.update(name=5), "field 'name': must be a string"),
    (lambda c: c["nodes"].append({"id": "x", "type": "robot"}), "unknown type 'robot'"),
    (lambda c: c["nodes"].append({"id": "x", "type": ["card"]}), "unknown type ['card']"),
    (lambda c: c["nodes"].append(dict(c["nodes"][0])), "is used twice"),
    (lambda c: c["arrows"].append({"id": "e9", "from": "c1", "to": "zz"}),
     ".to': refers to node 'zz', which is not among the case's nodes"),
    (lambda c: c["packages"]["acme.prompter"].update(grant="some"),
     "field 'packages.acme.prompter.grant': must be \"required\""),
    (lambda c: c["packages"]["acme.prompter"].update(grant=None), "grant"),
    (lambda c: c.update(http={"https://a.example.com/": {"status": "200"}}),
     "field 'http.https://a.example.com/.status': must be a whole number"),
    (lambda c: c.update(http={"https://a.example.com:99999/": {}}), "is not a URL"),
    (lambda c: c.update(dns={"a.example.com": "1.2.3.4"}), "field 'dns.a.example.com'"),
    (lambda c: _step(c, {"do": "dance"}), "step 5 (dance) field 'do': unknown do 'dance'"),
    (lambda c: _step(c, {"do": 3}), "step 5 field 'do': is required"),
    (lambda c: _step(c, ["do", "log"]), "step 5: a step is a JSON object"),
    (lambda c: _step(c, {"do": "tool.answer", "call": "k1"}),
     "a tool.answer has a result or an error, not both and not neither"),
    (lambda c: _step(c, {"do": "tool", "agent": "a1", "card": "c1", "tool": "x",
                         "args": [1]}), "step 5 (tool) field 'args': must be an object"),
    (lambda c: _step(c, {"do": "await", "step": "nope"}),
     "step 5 (await) field 'step': refers to 'nope', which no earlier step has as its id"),
    (lambda c: (_step(c, {"do": "log", "id": "L"}), _step(c, {"do": "hold.approve",
                                                               "hold": "L"})),
     "step 6 (hold.approve) field 'hold': refers to 'L', which is step 5 (log), not a call"),
    (lambda c: _step(c, {"do": "log", "card": "$NOPE"}),
     "step 5 (log) field 'card': uses $NOPE, which no earlier step binds"),
    (lambda c: _step(c, {"do": "log", "card": "$ME", "bind": "ME"}), "uses $ME"),
    (lambda c: (_step(c, {"do": "log", "bind": "B"}), _step(c, {"do": "log", "bind": "B"})),
     "step 6 (log) field 'bind': B is already bound by step 5"),
    (lambda c: (_step(c, {"do": "log", "id": "s"}), _step(c, {"do": "log", "id": "s"})),
     "step 6 (log) field 'id': 's' is already the id of step 5"),
    (lambda c: c["steps"].extend([{"do": "log", "t": 5}, {"do": "log", "t": 1}]),
     "step 6 (log) field 't': time goes backwards"),
    (lambda c: _step(c, {"do": "request", "card": "c1", "permission": "x", "answer": "maybe"}),
     "field 'answer': must be 'allow' or 'deny'"),
    (lambda c: _step(c, {"do": "node.set", "id": "a1"}), "field 'fields': is required"),
    (lambda c: c.update(colour="red"), "field 'colour': is not a field of a case"),
    (lambda c: c.pop("steps"), "field 'steps': is required"),
])
def test_invalid_cases_name_the_file_step_and_field(tmp_path, scratch, capsys, mutate,
                                                    fragment) -> None:
    """Each kind of invalid case is refused before anything is written, with a usable message."""
    case = _base()
    mutate(case)
    path = _write(tmp_path, case)
    code, _out, err = _replay(capsys, path)
    assert code == 2, err
    assert fragment in err and err.startswith(f"{path}: ")
    assert list(scratch.iterdir()) == []


def test_every_problem_is_listed(tmp_path, capsys) -> None:
    """Several problems in one case are all reported, each on its own line."""
    case = _base()
    case["steps"][0]["card"] = 5
    case["steps"][1]["do"] = "dance"
    case["files"] = {"../x": "y"}
    code, _out, err = _replay(capsys, _write(tmp_path, case))
    assert code == 2 and len([line for line in err.splitlines() if line]) == 3


@pytest.mark.parametrize("text, fragment", [
    ("{", "is not valid JSON"),
    ("[1]", "a case is a JSON object"),
    ("[" * 100_000 + "]" * 100_000, "nested too deeply"),
])
def test_unreadable_case_files(tmp_path, capsys, text, fragment) -> None:
    """Not JSON, not an object, nested too deeply: a clean refusal, never a traceback."""
    code, _out, err = _replay(capsys, _write(tmp_path, text))
    assert code == 2 and fragment in err


def test_a_case_that_is_not_utf8_or_not_a_file(tmp_path, capsys) -> None:
    """Bytes that are not UTF-8, a folder, a FIFO (never opened for a blocking read)."""
    bad = tmp_path / "latin.json"
    bad.write_bytes(b'{"name": "\xe9"}')
    fifo = tmp_path / "fifo.json"
    os.mkfifo(fifo)
    code, _out, err = _replay(capsys, bad, tmp_path, fifo, tmp_path / "missing.json")
    assert code == 2
    assert "is not UTF-8 text" in err and err.count("is not a regular file") == 2
    assert "cannot be read" in err


def test_an_invalid_case_does_not_stop_the_others(tmp_path, capsys) -> None:
    """Invalid, valid, invalid: the valid one is played and reported; exit 2."""
    bad = _base()
    bad["steps"].append({"do": "dance"})
    first, second = _write(tmp_path, bad, "a.json"), _write(tmp_path, bad, "c.json")
    code, out, err = _replay(capsys, first, CASES / "revoke.json", second)
    assert code == 2 and "replay: 1 passed, 2 failed" in out
    assert str(first) in err and str(second) in err
    assert main(["replay", "--json", str(first), str(CASES / "revoke.json")]) == 2
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines()
             if line.startswith("{")]
    assert lines[0]["invalid"] is True and all(line["passed"] for line in lines[1:])


def test_repeated_ids_of_nodes_and_arrows_are_valid(tmp_path, capsys) -> None:
    """node.set, node.remove and arrow.remove name a node or arrow: repeating one is fine."""
    case = _base()
    case["steps"] += [
        {"do": "node.set", "id": "a1", "fields": {"dangerous": True}},
        {"do": "node.set", "id": "a1", "fields": {"dangerous": False}},
        {"do": "arrow.remove", "id": "e1"},
        {"do": "arrow.remove", "id": "e1", "expect": {"error": "INVALID_ARROW"}},
        {"do": "log", "id": "a1"},  # a step's own id does not clash with a node's
    ]
    code, out, err = _replay(capsys, _write(tmp_path, case))
    assert (code, err) == (0, "") and "replay: 1 passed, 0 failed" in out


def test_load_case_raises_case_invalid_only(tmp_path) -> None:
    """The loader's one error is CaseInvalid, whose message names the file."""
    path = _write(tmp_path, {"steps": [{"do": "log", "t": "soon"}]})
    with pytest.raises(CaseInvalid) as caught:
        load_case(path)
    assert caught.value.code == "CASE_INVALID" and str(path) in caught.value.message


_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner,
                                                                max_size=3),
    max_leaves=8)


def _paths(value: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    out = [prefix]
    if isinstance(value, dict):
        for key, item in value.items():
            out += _paths(item, (*prefix, key))
    elif isinstance(value, list):
        for i, item in enumerate(value):
            out += _paths(item, (*prefix, i))
    return out


@settings(max_examples=150, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_fuzzed_cases_never_escape_as_exceptions(tmp_path, data) -> None:
    """Any field of a real case replaced by any JSON value: CaseInvalid or a case, nothing else."""
    base = _base()
    where = data.draw(st.sampled_from(_paths(base)[1:]))
    case = copy.deepcopy(base)
    parent = case
    for key in where[:-1]:
        parent = parent[key]
    parent[where[-1]] = data.draw(_JSON)
    path = tmp_path / "fuzz.json"
    path.write_text(json.dumps(case))
    try:
        load_case(path)
    except CaseInvalid as exc:
        assert exc.message.startswith(str(path))


# --------------------------------------------------------------------------- playing


async def test_bound_values_that_do_not_fit_fail_the_step_not_the_run(tmp_path) -> None:
    """$NAME.key missing, a failed binder, a value of the wrong type: that step fails only."""
    case = _base()
    case["steps"] = [
        {"do": "call", "card": "c1", "call": "agents.list", "bind": "L"},
        {"do": "log", "card": "$L.nope"},
        {"do": "call", "card": "zz", "call": "agents.list", "bind": "F",
         "expect": {"error": "CARD_UNKNOWN"}},
        {"do": "log", "card": "$F"},
        {"do": "log", "card": "$L"},
        {"do": "log.verify"},
    ]
    result = await run_case(_write(tmp_path, case))
    assert result.error == ""
    problems = [(s.index, s.problem) for s in result.steps if not s.passed]
    assert [i for i, _p in problems] == [1, 3, 4]
    assert "$L.nope: the value of $L (step 0) has no key 'nope'" in problems[0][1]
    assert "$F has no value: step 2, which binds it, failed" in problems[1][1]
    assert "after filling in bound values, field 'card' must be a string" in problems[2][1]
    assert result.steps[5].passed


async def test_retry_after_is_compared_within_a_millisecond(tmp_path) -> None:
    """A wrong retry_after fails the step and says what came."""
    case = json.loads((CASES / "retry-after.json").read_text())
    case["steps"][6]["expect"]["retry_after"] = 49.99
    result = await run_case(_write(tmp_path, case))
    failed = [s for s in result.steps if not s.passed]
    assert [s.index for s in failed] == [6]
    assert "expected retry_after 49.99 (within 0.001 s), got 50" in failed[0].problem


async def test_the_case_settings_reach_the_workspace(tmp_path, monkeypatch) -> None:
    """Every setting of the case, the new ones included, is the workspace's setting."""
    import engine.app.replay as replay

    opened: list[Any] = []
    real_open = replay.Engine.open

    def spy(*args: Any, **kwargs: Any) -> Any:
        opened.append(real_open(*args, **kwargs))
        return opened[-1]

    monkeypatch.setattr(replay.Engine, "open", spy)
    case = _base()
    case["settings"] = {"max_payload": 1000, "denial_log_limit": 7, "fs_max_bytes": 2048,
                        "tool_timeout": 12.5, "fetch_timeout": 3, "fetch_max_bytes": 99}
    result = await run_case(_write(tmp_path, case))
    assert result.passed
    got = opened[0].state.workspaces["w1"].settings.to_dict()
    assert {k: got[k] for k in case["settings"]} == case["settings"]


def test_an_unreachable_store_is_a_usage_error_naming_it(tmp_path, scratch, capsys) -> None:
    """--store URL that cannot be reached: exit 2, the store named (password hidden),
    nothing run. (Cases played on PostgreSQL: tests/pg/test_store.py.)"""
    url = f"postgresql://bob:hunter2@/cases?host={tmp_path / 'no-server'}"
    code = main(["replay", "--store", url, str(CASES / "revoke.json")])
    captured = capsys.readouterr()
    assert code == 2 and "replay:" not in captured.out
    assert "postgresql://bob:***@/cases" in captured.err
    assert "STORE_FAILED" in captured.err and "hunter2" not in captured.err
    assert main(["replay", "--store", "mysql://x/y", str(CASES / "revoke.json")]) == 2
    assert "not a PostgreSQL URL" in capsys.readouterr().err
    assert list(scratch.iterdir()) == []
