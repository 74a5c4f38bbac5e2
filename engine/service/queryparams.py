"""A request's query held to its route's own parameters: one it does not take is refused.

SPEC §10.1: "Malformed JSON, unknown fields and oversized bodies are 400/413
problems and change nothing." A body's unknown field is refused by its model;
FastAPI reads only the query parameters a route declares and ignores the rest,
so ``GET /v1/log?crad=c1`` (a typo of ``card``) answered the whole log as if
filtered. And a parameter given twice is read as its last value, so
``?card=a&card=b`` filtered by ``b`` alone. Both are refused here, before the
route reads anything: a 400 problem ``INVALID_ARGUMENT`` (reason
``unknown-parameter`` or ``repeated-parameter``) naming the parameter and
those the route takes.

What a route takes is read from its own declaration (the query parameters of
its dependant and its dependencies, as FastAPI reads them), once, when the
route is made: no list kept by hand. `engine.service.bodyvalues.BoundedRoute`
gives every route's endpoint the check as its last dependency (`query_checked`):
so who calls is known first (no token is a 401, as ever: a token sent in the
query is not read as one, and the answer says how to send it), then the query,
then the route's parameters and body. A request without a query costs one look
at the scope. The fast lane (`engine.service.fastlane`) hands FastAPI every
request whose query it does not take itself, so the same refusal answers it.

A parameter a route declares an integer is refused the same way unless it is
written in ASCII digits alone (``-`` before them for a negative one), as the
document's ``"type": "integer"`` says: pydantic's lax mode, which FastAPI reads a
query with, took ``10.0``, `` 10``, ``+5``, ``1_0`` and ``10\n`` as integers. One
declared a float (seconds: ``wait``, ``timeout``) is refused unless it is a plain
decimal (`DECIMAL_HELP`): read as pydantic reads a float, ``1e3``, ``1_0`` and
the like passed, and ``nan`` was refused as a number out of bounds.
"""

from __future__ import annotations

import functools
import inspect
import types
import typing
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Any

from fastapi import Depends, Request
from fastapi._compat import ModelField, field_annotation_is_sequence
from fastapi.dependencies.models import Dependant
from pydantic import AliasChoices, AliasPath, BaseModel

from engine.core.decimals import is_plain_decimal
from engine.service.problems import ServiceError

__all__ = ["DECIMAL_HELP", "QueryParameters", "query_checked"]

#: The most parameters a refusal names (a query may hold thousands of names).
_NAMED = 20
#: The most characters of a name a refusal shows.
_NAME_CHARS = 64

#: How the document describes such a number (each such parameter's description).
DECIMAL_HELP = ("written as a plain decimal: digits, optionally a `.` and more digits "
                "(`30`, `2.5`), at most 16 digits either side; no sign, exponent, spaces "
                "or `nan`/`inf`")


@dataclass(frozen=True)
class QueryParameters:
    """The query parameters a route takes, and which of them it reads as a list."""

    #: The route as a person reads it: ``GET /v1/log``.
    route: str
    #: The names the route takes, in the order it declares them.
    names: tuple[str, ...]
    #: Those read as a list of every value given: they may repeat.
    lists: frozenset[str]
    #: Those read as an integer: written in digits alone.
    integers: frozenset[str] = frozenset()
    #: Those read as a float: written as a plain decimal (`is_plain_decimal`).
    decimals: frozenset[str] = frozenset()

    @classmethod
    def of(cls, route: str, dependant: Dependant) -> QueryParameters:
        """The query parameters ``dependant`` (a route's) and its dependencies declare.

        Raises:
            TypeError: a parameter read from more than one name (a model of
                parameters, alias choices): the names it takes would not be all
                the names it reads, so the route is refused when it is made.
        """
        names: list[str] = []
        lists: set[str] = set()
        integers: set[str] = set()
        decimals: set[str] = set()
        for field in _query_fields(dependant):
            info = field.field_info
            annotation = info.annotation
            if isinstance(info.validation_alias, (AliasChoices, AliasPath)) or (
                    isinstance(annotation, type) and issubclass(annotation, BaseModel)):
                raise TypeError(f"{route}: query parameter {field.name!r} is read from more "
                                "than one name; declare each name a parameter of its own")
            if field.alias not in names:
                names.append(field.alias)
            if field_annotation_is_sequence(annotation):
                lists.add(field.alias)
            elif _is_only(int, annotation):
                integers.add(field.alias)
            elif _is_only(float, annotation):
                decimals.add(field.alias)
        return cls(route, tuple(names), frozenset(lists), frozenset(integers),
                   frozenset(decimals))

    def refusal(self, items: Iterable[tuple[str, str]]) -> ServiceError | None:
        """The 400 for a query of ``items`` (name, value) this route does not take as
        given (a name it does not take, one it reads once given more than once, or an
        integer not written in digits alone);
        None when it takes them all."""
        items = list(items)
        given = Counter(name for name, _value in items)
        unknown = [name for name in given if name not in self.names]
        if unknown:
            some = ", ".join(_shown(n) for n in unknown[:_NAMED])
            more = f" and {len(unknown) - _NAMED:,} more" if len(unknown) > _NAMED else ""
            which = "is not a parameter" if len(unknown) == 1 else "are not parameters"
            return self._refused(
                f"query: {some}{more} {which} of {self.route}, which takes "
                f"{self._takes()}; nothing was done", "unknown-parameter", unknown,
                "not a parameter of this route")
        repeated = [name for name, count in given.items()
                    if count > 1 and name not in self.lists]
        if repeated:
            some = ", ".join(f"{_shown(n)} given {given[n]:,} times" for n in repeated)
            return self._refused(
                f"query: {some}; {self.route} takes each of its parameters "
                f"({self._takes()}) once; nothing was done", "repeated-parameter", repeated,
                "given more than once")
        for name, value in items if self.integers or self.decimals else ():
            if name in self.integers and not _digits(value):
                return _invalid(name, value, "an integer written in digits alone (0-9)",
                                "an integer is written in digits alone")
            if name in self.decimals and not is_plain_decimal(value):
                return _invalid(name, value, f"a number {DECIMAL_HELP}",
                                f"a number is {DECIMAL_HELP}")
        return None

    def _takes(self) -> str:
        return ", ".join(_shown(n) for n in self.names) if self.names else \
            "no query parameters"

    def _refused(self, text: str, reason: str, names: list[str], problem: str
                 ) -> ServiceError:
        return ServiceError(400, "INVALID_ARGUMENT", text, reason=reason,
                            takes=list(self.names),
                            problems=[{"where": f"query.{_cut(n)}", "problem": problem}
                                      for n in names[:_NAMED]])


def query_checked(endpoint: Callable[..., Any], taken: Callable[[], QueryParameters]
                  ) -> Callable[..., Any]:
    """``endpoint`` with one dependency more, its last: a query `QueryParameters.refusal`
    refuses, ``taken()`` being what the route takes, is raised there.

    FastAPI solves a route's dependencies in the order its endpoint declares them,
    then reads its parameters and body: so the query is refused once every other
    dependency is solved (the caller's: a request without a token is a 401 first),
    before anything of the request is read. The endpoint is called as it was.
    """
    async def check(request: Request) -> None:
        if request.scope["query_string"]:
            refusal = taken().refusal(request.query_params.multi_items())
            if refusal is not None:
                raise refusal

    signature = inspect.signature(endpoint, eval_str=True)
    last = inspect.Parameter(_CHECK, inspect.Parameter.KEYWORD_ONLY, default=Depends(check))
    params = list(signature.parameters.values())
    # A keyword-only parameter goes before ``**kwargs``, when the endpoint has them.
    at = next((i for i, p in enumerate(params) if p.kind is p.VAR_KEYWORD), len(params))
    params.insert(at, last)

    checked: Callable[..., Any]
    if inspect.iscoroutinefunction(endpoint):
        @functools.wraps(endpoint)
        async def checked(**kwargs: Any) -> Any:
            kwargs.pop(_CHECK)
            return await endpoint(**kwargs)
    else:
        @functools.wraps(endpoint)
        def checked(**kwargs: Any) -> Any:
            kwargs.pop(_CHECK)
            return endpoint(**kwargs)
    # FastAPI reads the signature (this one, not the endpoint's: `inspect.signature`).
    checked.__signature__ = signature.replace(parameters=params)  # type: ignore[attr-defined]
    return checked


#: The name of the check's parameter (FastAPI passes every argument by name).
_CHECK = "arrowgate_query_checked"


def _query_fields(dependant: Dependant) -> Iterator[ModelField]:
    """The query parameter fields of ``dependant`` and of every dependency it has."""
    seen: set[int] = set()
    todo = [dependant]
    while todo:
        current = todo.pop(0)
        if id(current) in seen:
            continue
        seen.add(id(current))
        yield from current.query_params
        todo.extend(current.dependencies)


def _invalid(name: str, value: str, what: str, problem: str) -> ServiceError:
    """The 400 for ``value`` given to ``name``, which takes ``what``."""
    return ServiceError(400, "INVALID_ARGUMENT", f"query.{_cut(name)}: {_cut(value)!r} is not "
                        f"{what}; nothing was done", reason="invalid",
                        problems=[{"where": f"query.{_cut(name)}", "problem": problem}])


def _is_only(kind: type, annotation: Any) -> bool:
    """Whether a parameter of type ``annotation`` is read as a ``kind`` (``kind``, or
    ``kind | None``)."""
    if annotation is kind:
        return True
    if typing.get_origin(annotation) in (typing.Union, types.UnionType):
        kinds = [a for a in typing.get_args(annotation) if a is not type(None)]
        return kinds == [kind]
    return False


def _digits(value: str) -> bool:
    """Whether ``value`` is an integer in ASCII digits alone, ``-`` before them or not."""
    digits = value[1:] if value.startswith("-") else value
    return digits.isascii() and digits.isdigit()


def _cut(name: str) -> str:
    """A name as a refusal shows it: at most `_NAME_CHARS` characters of it."""
    return name if len(name) <= _NAME_CHARS else name[:_NAME_CHARS] + "…"


def _shown(name: str) -> str:
    return f"'{_cut(name)}'"
