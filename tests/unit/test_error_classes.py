"""One exception class per error code, the ``CODE: `` prefix made in one place (issue 14).

A raise site names the class and gives the text; the class carries ``code``
and puts it in front of the message. The static check below reads every
module of ``engine/`` and ``canvas/`` so a code written by hand (``code="X"``
or a message starting ``"X: "``) cannot come back.
"""

from __future__ import annotations

import ast
import builtins
import re
from pathlib import Path
from typing import Any

import pytest

import engine
from canvas import InvalidArrow as CanvasInvalidArrow
from engine import (
    ApprovalRefused,
    CallDenied,
    CardLimit,
    CardUnknown,
    CaseInvalid,
    ConsentError,
    InvalidArgument,
    InvalidArrow,
    InvalidNode,
    InvalidRequest,
    ManifestInvalid,
    NotFound,
    PackageNotInstalled,
    PackagePending,
    RequestRefused,
    StoreFailed,
)
from engine.app.cli_write import USAGE, Failure
from engine.core.checks import denial
from engine.core.errors import CODES, with_code
from engine.effects.netguard import FetchFailed, FetchTooLarge
from engine.service.problems import ServiceError, error_response, status_of

ROOT = Path(__file__).resolve().parents[2]

#: Each class a raise site uses, with its code.
REQUEST_CLASSES: list[tuple[type[InvalidRequest], str]] = [
    (InvalidArgument, "INVALID_ARGUMENT"),
    (InvalidArrow, "INVALID_ARROW"),
    (InvalidNode, "INVALID_NODE"),
    (NotFound, "NOT_FOUND"),
    (CardUnknown, "CARD_UNKNOWN"),
    (CardLimit, "CARD_LIMIT"),
    (PackageNotInstalled, "PACKAGE_NOT_INSTALLED"),
    (PackagePending, "PACKAGE_PENDING"),
]


@pytest.mark.parametrize("cls, code", REQUEST_CLASSES)
def test_each_request_class_has_its_code_and_makes_the_prefix(
        cls: type[InvalidRequest], code: str) -> None:
    """``NotFound("no node 'x'")`` reads ``NOT_FOUND: no node 'x'`` and is an InvalidRequest."""
    exc = cls("no node 'x'", reason="missing-node", package="p")
    assert exc.code == code and code in CODES
    assert exc.message == str(exc) == f"{code}: no node 'x'"
    assert isinstance(exc, InvalidRequest) and isinstance(exc, ConsentError)
    assert exc.to_json() == {"code": code, "reason": "missing-node", "permission": None,
                             "card": None, "package": "p", "message": f"{code}: no node 'x'"}
    with pytest.raises(InvalidRequest):  # every existing `except InvalidRequest` still holds
        raise exc


@pytest.mark.parametrize("cls, code", [(ApprovalRefused, "APPROVAL_REFUSED"),
                                       (RequestRefused, "REQUEST_REFUSED"),
                                       (StoreFailed, "STORE_FAILED")])
def test_the_single_code_families_make_the_prefix_too(cls: type[ConsentError], code: str) -> None:
    """The older classes put their code in front the same way."""
    exc = cls("grant from 'agent:a1': from-agent", reason="from-agent")
    assert (exc.code, exc.message) == (code, f"{code}: grant from 'agent:a1': from-agent")
    assert not isinstance(exc, InvalidRequest)


def test_manifest_invalid_keeps_its_problems() -> None:
    """ManifestInvalid: prefixed message, and every problem with its JSON path in the JSON form."""
    exc = ManifestInvalid("$.name: missing", problems=[("$.name", "missing")], package="p")
    assert exc.message == "MANIFEST_INVALID: $.name: missing"
    assert exc.to_json()["problems"] == [{"path": "$.name", "problem": "missing"}]


def test_call_denied_and_case_invalid_keep_their_text_whole() -> None:
    """A Decision's message already starts with its code; a case file's problems name the file."""
    decision = denial("agents.prompt", "c1", "PERMISSION_DENIED", reason="no-arrow")
    exc = CallDenied(decision)
    assert exc.code == "PERMISSION_DENIED" and exc.message == decision.message
    assert exc.message.startswith("PERMISSION_DENIED: card c1 may not agents.prompt")
    case = CaseInvalid("x.json: file: is not UTF-8 text")
    assert (case.code, case.message) == ("CASE_INVALID", "x.json: file: is not UTF-8 text")


def test_the_new_classes_are_exported() -> None:
    """``from engine import NotFound`` works, as for the older classes."""
    for cls, _code in REQUEST_CLASSES:
        assert getattr(engine, cls.__name__) is cls and cls.__name__ in engine.__all__


async def test_the_engine_raises_the_class_with_todays_message(
        make_engine: Any, tmp_path: Path) -> None:
    """The engine's errors: the class of their code, the message word for word as before."""
    eng = make_engine()
    await eng.open_workspace("w1", tmp_path)
    await eng.add_node({"id": "n1", "type": "note"}, workspace="w1")
    with pytest.raises(NotFound) as missing:
        await eng.remove_node("ghost")
    assert missing.value.message == "NOT_FOUND: no node 'ghost'"
    assert missing.value.reason == "missing-node"
    # A canvas error crosses into the engine's tree as the class of its code.
    with pytest.raises(InvalidArrow) as arrow:
        await eng.add_arrow({"id": "e1", "from": "n1", "to": "n1"})
    assert arrow.value.message == "INVALID_ARROW: arrow e1: a node cannot have an arrow to itself"
    assert arrow.value.reason == "self-arrow" and not isinstance(arrow.value, CanvasInvalidArrow)
    with pytest.raises(InvalidNode, match=r"^INVALID_NODE: node n2: unknown type 'nope'"):
        await eng.add_node({"id": "n2", "type": "nope"}, workspace="w1")
    with pytest.raises(InvalidRequest) as package:
        await eng.grant("ghost-package", "fs.read")
    assert type(package.value) is NotFound and package.value.package == "ghost-package"
    assert package.value.message == "NOT_FOUND: no package 'ghost-package' is known"
    eng.close()


def test_service_errors_make_the_prefix_and_map_status_by_class() -> None:
    """ServiceError puts its code in front; engine errors map to HTTP statuses by class."""
    exc = ServiceError(404, "NOT_FOUND", "no tool call 'x'", reason="missing")
    assert exc.message == "NOT_FOUND: no tool call 'x'"
    assert b'"detail": "NOT_FOUND: no tool call \'x\'"' in error_response(exc).body
    statuses = {cls: status_of(cls("x")) for cls, _code in REQUEST_CLASSES}
    assert statuses == {InvalidArgument: 400, InvalidArrow: 400, InvalidNode: 400, NotFound: 404,
                        CardUnknown: 404, CardLimit: 400, PackageNotInstalled: 409,
                        PackagePending: 409}
    assert status_of(ApprovalRefused("x", reason="stale")) == 409
    assert status_of(ApprovalRefused("x", reason="from-agent")) == 403
    assert status_of(RequestRefused("x")) == 403
    assert status_of(StoreFailed("x")) == 503
    assert status_of(ManifestInvalid("x", problems=[])) == 400


def test_fetch_and_cli_failures_carry_their_code_once() -> None:
    """A too-large answer is refused by scope; a CLI failure's message gets its code in front."""
    big = FetchTooLarge("the response is larger than 10 bytes")
    assert isinstance(big, FetchFailed)
    assert (big.code, big.reason, big.why) == ("SCOPE_REFUSED", "too-large",
                                               "the response is larger than 10 bytes")
    assert FetchFailed("timeout", "no answer").code == "FETCH_FAILED"
    failure = Failure.coded(USAGE, "INVALID_ARROW", "node a1 is not in workspace w2",
                            reason="cross-workspace")
    assert str(failure) == "INVALID_ARROW: node a1 is not in workspace w2"
    # Its JSON form has every key an engine error's has, its message its code in front
    # (round 28: one verb's error reads alike through --db and --service).
    assert failure.data == {"card": None, "code": "INVALID_ARROW", "package": None,
                            "permission": None, "reason": "cross-workspace",
                            "message": "INVALID_ARROW: node a1 is not in workspace w2"}
    assert with_code("NOT_FOUND", "x") == "NOT_FOUND: x"


# --- The static check: no code written by hand at a raise site -----------------------------

_PREFIX = re.compile(r"^[A-Z][A-Z_]{3,}: ")
_BUILTIN_ERRORS = {name for name, value in vars(builtins).items()
                   if isinstance(value, type) and issubclass(value, BaseException)}
#: Functions that make an error answer without an exception class (the service's problem+json).
_ERROR_MAKERS = {"problem"}


def _name(node: ast.expr) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    return None


def _exception_classes(trees: list[ast.Module]) -> set[str]:
    """Names of the exception classes defined in ``trees`` (by their bases, transitively)."""
    bases = {node.name: {_name(b) for b in node.bases}
             for tree in trees for node in ast.walk(tree) if isinstance(node, ast.ClassDef)}
    found = set(_BUILTIN_ERRORS)
    grew = True
    while grew:
        new = {name for name, of in bases.items() if name not in found and of & found}
        found |= new
        grew = bool(new)
    return found


def _code_first(part: ast.AST) -> str | None:
    """The code a string starts with by hand: ``"X: ..."`` or ``f"{e.code}: ..."``."""
    if isinstance(part, ast.Constant) and isinstance(part.value, str) and _PREFIX.match(part.value):
        return part.value[:40]
    if (isinstance(part, ast.JoinedStr) and len(part.values) > 1
            and isinstance(part.values[0], ast.FormattedValue)
            and _name(part.values[0].value) == "code"
            and isinstance(part.values[1], ast.Constant)
            and str(part.values[1].value).startswith(": ")):
        return ast.unparse(part)[:40]
    return None


def _hand_written_codes(sources: dict[str, str]) -> list[str]:
    """Each place an exception is made with ``code=`` or a message starting ``"CODE: "``."""
    trees = {where: ast.parse(text) for where, text in sources.items()}
    exceptions = _exception_classes(list(trees.values()))
    found = []
    for where, tree in trees.items():
        raised = {id(node.exc) for node in ast.walk(tree)
                  if isinstance(node, ast.Raise) and node.exc is not None}
        for node in ast.walk(tree):
            if not isinstance(node, ast.Call):
                continue
            if (_name(node.func) not in exceptions | _ERROR_MAKERS
                    and id(node) not in raised):
                continue
            for keyword in node.keywords:
                if keyword.arg == "code":
                    found.append(f"{where}:{node.lineno}: code= passed to {_name(node.func)}")
            for arg in [*node.args, *(k.value for k in node.keywords)]:
                for part in ast.walk(arg):
                    text = _code_first(part)
                    if text is not None:
                        found.append(f"{where}:{node.lineno}: message starts with a code: "
                                     f"{text!r}")
    return found


def test_the_static_check_finds_a_code_written_by_hand() -> None:
    """The check itself: today's old form is caught, the new form is not."""
    old = ('class InvalidRequest(Exception): ...\n'
           'def f(x):\n'
           '    raise InvalidRequest(f"NOT_FOUND: no node {x!r}", code="NOT_FOUND")\n'
           'def g():\n'
           '    return InvalidRequest("INVALID_ARGUMENT: bad" " input")\n'
           'def h(exc):\n'
           '    return InvalidRequest(f"{exc.code}: {exc.message}")\n'
           'def i():\n'
           '    return problem(400, "INVALID_ARGUMENT", "INVALID_ARGUMENT: too large")\n')
    new = ('class NotFound(Exception): ...\n'
           'def f(x):\n'
           '    raise NotFound(f"no node {x!r}", reason="missing-node")\n')
    assert len(_hand_written_codes({"old.py": old})) == 5
    assert _hand_written_codes({"new.py": new}) == []


def test_no_raise_site_writes_its_code_by_hand() -> None:
    """No exception in engine/ or canvas/ is made with code= or a "CODE: " message prefix."""
    sources = {str(path.relative_to(ROOT)): path.read_text(encoding="utf-8")
               for folder in ("engine", "canvas") for path in sorted((ROOT / folder).rglob("*.py"))}
    assert len(sources) > 50
    assert _hand_written_codes(sources) == []
