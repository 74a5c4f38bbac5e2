"""A tool's input schema (SPEC §2, §9): what a manifest may hold, and the validator
that checks a call's arguments against it on the service's event loop.

jsonschema as it comes trusts the schema and the instance to be kind. A card writes
the schema and an agent writes the instance, so this module's validator is Draft
2020-12 with the keywords that cost more than reading the instance replaced, and
`schema_problems` refuses at offer what that validator could not check safely:

- `pattern` and `patternProperties` (and `additionalProperties`, which reads the
  latter's keys) match with RE2, in time linear in the text, never with Python's
  backtracking `re` (one call with ``^(a+)+$`` froze the whole service). jsonschema's
  `unevaluatedProperties` matches the ``patternProperties`` it meets with `re`, so a
  schema may hold one or the other, not both.
- `uniqueItems` keys each item once and looks the keys up in a dict (linear), where
  jsonschema compares every pair of an array it cannot sort (a mixed array of 32,000
  numbers and strings took 90 s).
- No schema is ever retrieved: jsonschema fetched an unknown `$ref` (``http://``,
  ``file://``) at every call, with no timeout and no `network` permission (SPEC
  §8.1). The validator's registry refuses every retrieval, and every `$ref` and
  `$dynamicRef` must be local (``#…``) and resolve to a schema: a dangling one
  installed, then made every call a 500.
- `anyOf` and `oneOf` keep the first few errors of each branch as their context, where
  jsonschema builds all of them (an array of 30,000 wrong items was 30,000 errors).
- `multipleOf` falls back to exact fractions whenever floats overflow, as jsonschema
  means to, where jsonschema divides before its guard (a 400-digit integer against
  ``0.01`` raised OverflowError).
- `enum` looks the argument up among its values' keys (`unique_key`), where jsonschema
  compares it with each value in turn (2,000 items against a 20,000-value enum: 35 s).
- Every subschema is checked by this validator: jsonschema's ``evolve`` picks a class
  by each subschema's ``$schema``, so a draft-07 one matched its patterns with ``re``.
- Within `check_budget`, every step (a subschema entered, a keyword applied, counted
  with the length of its list or object) is charged: ``$ref`` keywords that share subschemas
  make a small schema exponential (17 ``$defs`` doubling each other were 2^17 walks for
  ``{}``), which no check at offer bounds for every argument. Past the budget, the
  check stops with `TooCostly`. ``properties`` is charged, and reads, only the names
  an argument and the schema share (the shorter side's); ``patternProperties`` and
  ``additionalProperties`` are charged a step for each key each pattern is tried on,
  and every RE2 search a step more for each 1,024 characters times instructions of
  its program it may run (at least a step for each 16 characters of its text).
  ``uniqueItems`` is charged a step an item, `unique_key` each array's and object's
  length, and an error's message a step for each 64 characters: each reads the
  whole argument, once for each time its keyword applies.
- A subschema's validator and a ``$ref``'s target are made once a check (`_Check`),
  where jsonschema made them again at every item: a step is about 1 µs, not 3 to 9.
- A loop of references that never reaches into the argument (``{"$ref": "#"}``)
  is refused at offer: checking a call against it would recurse without end.
"""

from __future__ import annotations

import functools
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from fractions import Fraction
from itertools import islice
from typing import Any

__all__ = ["MAX_INSTRUCTIONS", "MAX_PATTERN_INSTRUCTIONS", "MAX_PATTERN_TEXT", "PatternBudget",
           "TooCostly", "check_budget", "first_duplicate", "pattern_text", "regex_problem",
           "schema_problems", "tool_validator", "unique_key"]

@functools.cache
def _lib() -> Any:
    """What the keywords use of jsonschema and referencing, imported once.

    Imported at the first check, as jsonschema is (most processes that import the
    engine never read a tool's schema); and not by a ``from`` import in each keyword:
    that asks `jsonschema.exceptions` for a ``__path__``, which its module
    ``__getattr__`` refuses by formatting an error, a µs at every item.
    """
    from types import SimpleNamespace

    from jsonschema import exceptions
    from referencing import exceptions as referencing_exceptions
    from referencing.jsonschema import DRAFT202012

    return SimpleNamespace(
        DRAFT202012=DRAFT202012, Unresolvable=referencing_exceptions.Unresolvable,
        ValidationError=exceptions.ValidationError,
        WrappedReferencingError=exceptions._WrappedReferencingError)


#: The most compiled patterns `_regex` keeps (the ones of installed tools, over and over).
_REGEXES_KEPT = 1024

#: The most instructions a pattern's RE2 program may have. A pattern's search may cost
#: its text times its program (`_matches`), and every pattern kept holds its program:
#: ``[01]{1000}`` written 590 times over (5,900 characters) is 590,000 instructions,
#: and a manifest of 80 of them took 22 s to offer and kept 420 MB. Ten thousand is
#: over three times ``^[A-Za-z0-9]{1,1000}$`` (3,001) or an e-mail address spelled out
#: with bounds (3,227).
MAX_INSTRUCTIONS = 10_000
#: The memory RE2 may use for one pattern (its program and its DFA's states), in place
#: of its default 8 MiB: a program far past `MAX_INSTRUCTIONS` stops compiling within
#: it, and the patterns kept hold at most this each, however they are searched.
_REGEX_MEMORY = 1 << 20
#: The most instructions the patterns of one manifest compile to in all (`PatternBudget`):
#: RE2 compiles some 1.5 million a second, on the service's loop, and a manifest of
#: 4,364 patterns of 9,000 instructions each took 20 s to offer. Every pattern of an
#: installed tool is compiled again when the patterns kept (`_REGEXES_KEPT`) have
#: been pushed out, at a call, uncharged: this bounds that too.
MAX_PATTERN_INSTRUCTIONS = 250_000
#: The most characters of pattern text one manifest holds (`pattern_text`): RE2 and
#: Python's ``re`` (JSON Schema's ``format: regex``, at `check_schema`) read all of a
#: pattern before either can say it is too large, RE2 at up to 26 µs a character.
MAX_PATTERN_TEXT = 32 * 1024


class _TooLarge(Exception):  # noqa: N818 -- a reason to refuse, as re2.error is
    """A pattern's program is more than `MAX_INSTRUCTIONS`."""

    def __init__(self, instructions: int) -> None:
        super().__init__(f"{instructions:,} instructions")
        self.instructions = instructions


@functools.lru_cache(maxsize=_REGEXES_KEPT)
def _regex(pattern: str) -> Any:
    """``pattern`` compiled by RE2, once.

    Raises:
        re2.error: when RE2 cannot compile it (a program past `_REGEX_MEMORY` too).
        _TooLarge: when its program is more than `MAX_INSTRUCTIONS` (it is not kept).
    """
    # Imported here, as jsonschema is: most processes that import the engine
    # never read a tool's schema.
    import re2

    options = re2.Options()
    # RE2 writes each error to stderr as well: the refusal names it already.
    options.log_errors = False
    options.max_mem = _REGEX_MEMORY
    compiled = re2.compile(pattern, options)
    if compiled.programsize > MAX_INSTRUCTIONS:
        raise _TooLarge(compiled.programsize)
    return compiled


class PatternBudget:
    """The instructions the patterns of one manifest may still compile to
    (`MAX_PATTERN_INSTRUCTIONS`), shared by the `schema_problems` of its tools."""

    def __init__(self, instructions: int = MAX_PATTERN_INSTRUCTIONS) -> None:
        #: Instructions left; below zero once a pattern went past them.
        self.left = instructions


#: What `regex_problem` says of a pattern whose program is too large.
_TOO_LARGE = "a pattern too large to match in bounded time: RE2 compiles it to"


def regex_problem(pattern: str) -> str | None:
    """Why RE2 cannot compile ``pattern`` (a schema's ``pattern`` or a
    ``patternProperties`` key) to a program of at most `MAX_INSTRUCTIONS`, or None
    when it can."""
    import re2

    try:
        _regex(pattern)
    except _TooLarge as exc:
        return f"{_TOO_LARGE} {exc.instructions:,} instructions, more than {MAX_INSTRUCTIONS:,}"
    except re2.error as exc:
        what = exc.args[0] if exc.args else exc
        text = what.decode("utf-8", "replace") if isinstance(what, bytes) else str(what)
        if text.startswith("pattern too large"):
            # Past `_REGEX_MEMORY`: RE2 stopped compiling, far past the bound.
            return f"{_TOO_LARGE} more than {MAX_INSTRUCTIONS:,} instructions"
        return ("a pattern RE2 cannot compile (backreferences and lookaround are not "
                f"supported): {text[:200]}")
    return None


#: What `schema_problems` says of a pattern past its manifest's `PatternBudget`.
_PAST_BUDGET = (f"one pattern too many: the patterns of a manifest compile to at most "
                f"{MAX_PATTERN_INSTRUCTIONS:,} RE2 instructions in all")


def _budgeted_problem(pattern: str, budget: PatternBudget | None) -> str | None:
    """`regex_problem`, the pattern's instructions taken from ``budget`` (one too large
    counted as `MAX_INSTRUCTIONS`); past the budget, a problem, and not compiled."""
    if budget is None:
        return regex_problem(pattern)
    if budget.left < 0:
        return _PAST_BUDGET
    bad = regex_problem(pattern)
    if bad is None:
        budget.left -= _regex(pattern).programsize
        return _PAST_BUDGET if budget.left < 0 else None
    if bad.startswith(_TOO_LARGE):
        budget.left -= MAX_INSTRUCTIONS
    return bad


def pattern_text(schema: Any) -> int:
    """The characters of every pattern of ``schema`` (``pattern`` texts and
    ``patternProperties`` keys), counted without compiling any. Iterative.

    Every object of the schema is looked in, not only its subschemas: one under a
    keyword of an older draft (``definitions``) is a schema to the meta-schema and
    to a ``$ref``, so its patterns are compiled as well.
    """
    count = 0
    stack: list[Any] = [schema]
    while stack:
        node = stack.pop()
        if isinstance(node, list):
            stack.extend(node)
        elif isinstance(node, dict):
            if isinstance(node.get("pattern"), str):
                count += len(node["pattern"])
            if isinstance(node.get("patternProperties"), dict):
                count += sum(len(key) for key in node["patternProperties"])
            stack.extend(node.values())
    return count


#: Characters of text times instructions of its program an RE2 search is charged a
#: step for (`_matches`): about 10 ns each where RE2 runs its NFA, so a step is about
#: what one of jsonschema's keywords costs (10 µs).
_CHAR_INSTRUCTIONS_A_STEP = 1024
#: The fewest instructions a search is charged for: a small program's search costs
#: the step for each 16 characters of its text it always did.
_FEWEST_INSTRUCTIONS = 64


def _matches(pattern: str, text: str) -> bool:
    """True when ``pattern`` matches somewhere in ``text`` (JSON Schema does not anchor).

    Charged, before it runs, for the work it may do (`check_budget`): RE2 is linear in
    the text, but times the size of its program where its DFA gives up and its NFA
    steps every live instruction at each character (``1[01]{1000}`` ten times over, a
    20,000-instruction program, took 3.7 s over 20,000 characters for 1,250 steps of
    a budget of a million); and a schema may apply a thousand patterns to one string
    of ``max_payload``.
    """
    regex = _regex(pattern)
    instructions = max(regex.programsize, _FEWEST_INSTRUCTIONS)
    _charge(len(text) * instructions // _CHAR_INSTRUCTIONS_A_STEP)
    return regex.search(text) is not None


def _brief(value: Any) -> str:
    """``value``'s repr cut short: an argument may be as long as ``max_payload``."""
    text = repr(value)
    return text if len(text) <= 64 else text[:63] + "…"


def _pattern(validator: Any, pattern: str, instance: Any, schema: Any) -> Iterator[Any]:
    """``pattern``, matched by RE2."""
    ValidationError = _lib().ValidationError

    if validator.is_type(instance, "string") and not _matches(pattern, instance):
        yield ValidationError(f"{_brief(instance)} does not match {pattern!r}")


def _pattern_properties(validator: Any, patterns: dict[str, Any], instance: Any,
                        schema: Any) -> Iterator[Any]:
    """``patternProperties``, its keys matched by RE2."""
    if not validator.is_type(instance, "object"):
        return
    for pattern, subschema in patterns.items():
        # Each pattern is tried on every key: charged before it is, not once a pattern.
        _charge(len(instance))
        for key, value in instance.items():
            if _matches(pattern, key):
                yield from validator.descend(value, subschema, path=key, schema_path=pattern)


#: Each `properties` object's names and their places in it, by the object's id, with
#: the object (kept alive so that its id is not reused while it is here).
_PLACES: dict[int, tuple[dict[str, Any], dict[str, int]]] = {}
#: The most `properties` objects `_places` keeps (then it starts again).
_PLACES_KEPT = 1024


def _places(named: dict[str, Any]) -> dict[str, int]:
    """Each name of ``named`` and its place in it, made once for each object."""
    found = _PLACES.get(id(named))
    if found is not None and found[0] is named:
        return found[1]
    places = {name: at for at, name in enumerate(named)}
    if len(_PLACES) >= _PLACES_KEPT:
        _PLACES.clear()
    _PLACES[id(named)] = (named, places)
    return places


def _properties(validator: Any, named: Any, instance: Any, schema: Any) -> Iterator[Any]:
    """``properties``: the names both the argument and the schema have, in the
    schema's order, found from the side with fewer of them and charged for those.

    jsonschema reads the schema's whole list each time: a row of one field
    against a table of 60 columns was 61 steps, so a few thousand partial rows
    were "too costly" while their check took milliseconds.
    """
    if not validator.is_type(instance, "object"):
        _charge(1)
        return
    _charge(1 + min(len(named), len(instance)))
    if len(instance) < len(named):
        places = _places(named)
        both = sorted((key for key in instance if key in places), key=places.__getitem__)
    else:
        both = [key for key in named if key in instance]
    for key in both:
        yield from validator.descend(instance[key], named[key], path=key, schema_path=key)


def _additional_properties(validator: Any, extra: Any, instance: Any,
                           schema: Any) -> Iterator[Any]:
    """``additionalProperties``: jsonschema's, with ``patternProperties`` matched by RE2."""
    ValidationError = _lib().ValidationError

    if not validator.is_type(instance, "object"):
        return
    named = schema.get("properties", {})
    patterns = schema.get("patternProperties", {})
    extras: list[str] = []
    for key in instance:
        if key in named:
            continue
        # Every pattern may be tried on this key: charged for all of them first.
        _charge(len(patterns))
        if not any(_matches(pattern, key) for pattern in patterns):
            extras.append(key)
    if validator.is_type(extra, "object"):
        for key in extras:
            yield from validator.descend(instance[key], extra, path=key)
    elif not extra and extras:
        shown = ", ".join(repr(key) for key in sorted(extras)[:5])
        more = f" and {len(extras) - 5} more" if len(extras) > 5 else ""
        yield ValidationError(f"Additional properties are not allowed ({shown}{more} "
                              f"{'was' if len(extras) == 1 else 'were'} unexpected)")


def unique_key(value: Any) -> Any:
    """A key equal for two JSON values exactly when JSON Schema holds them equal:
    ``1 == 1.0``, ``true != 1``, objects by keys and values, arrays in order.

    Its leaves are strings (numbers by their decimal text), so that its hash is
    Python's randomised string hash: integers hash alike by design (``n`` and
    ``n + 2**61 - 1``), which would let an agent make a dict of them quadratic.
    """
    if isinstance(value, bool) or value is None:
        return repr(value)
    if isinstance(value, float) and value.is_integer():
        value = int(value)  # 1.0 is 1 (and -0.0 is 0)
    if isinstance(value, int):
        return ("n", str(value))
    if isinstance(value, float):
        return ("f", repr(value))
    if isinstance(value, str):
        return ("s", value)
    # Within a check, each array and object is charged its length (`check_budget`):
    # ``uniqueItems``, ``enum`` and ``const`` read the whole argument, once for each
    # time the keyword applies, which shared references multiply (``uniqueItems``
    # 4,096 times over 35,000 items took 66 s, each time one step).
    if isinstance(value, (list, tuple)):
        _charge(len(value))
        return ("a", *map(unique_key, value))
    if isinstance(value, dict):
        _charge(len(value))
        return ("o", frozenset((key, unique_key(item)) for key, item in value.items()))
    raise TypeError(f"a {type(value).__name__} is not JSON")


def first_duplicate(items: list[Any]) -> tuple[int, int] | None:
    """The indexes of the first item equal (`unique_key`) to an earlier one, and of
    that earlier one, or None when all are unique. Linear in the items' size."""
    # A step an item, within a check (`unique_key`).
    _charge(len(items))
    first: dict[Any, int] = {}
    for i, item in enumerate(items):
        j = first.setdefault(unique_key(item), i)
        if j != i:
            return j, i
    return None


def _unique_items(validator: Any, unique: Any, instance: Any, schema: Any) -> Iterator[Any]:
    """``uniqueItems``, in time linear in the array."""
    ValidationError = _lib().ValidationError

    if unique and validator.is_type(instance, "array"):
        pair = first_duplicate(instance)
        if pair is not None:
            yield ValidationError(f"has non-unique elements (items {pair[0]} and {pair[1]} "
                                  "are equal)")


def _multiple_of(validator: Any, step: Any, instance: Any, schema: Any) -> Iterator[Any]:
    """``multipleOf``: jsonschema's float test, and its exact fallback whenever a float
    overflows (there, the division itself overflowed, outside its guard)."""
    ValidationError = _lib().ValidationError

    if not validator.is_type(instance, "number"):
        return
    try:
        if isinstance(step, float):
            quotient = instance / step
            failed = int(quotient) != quotient
        else:
            failed = bool(instance % step)
    except OverflowError:
        failed = (Fraction(instance) / Fraction(step)).denominator != 1
    if failed:
        yield ValidationError(f"{_brief(instance)} is not a multiple of {_brief(step)}")


class TooCostly(Exception):  # noqa: N818 -- a reason to stop, not a failure of the code
    """Checking the arguments took every step of its `check_budget`."""

    def __init__(self, steps: int) -> None:
        super().__init__(f"more than {steps} steps")
        self.steps = steps


class _Check:
    """The check under way (`check_budget`): its steps, and what it made once and
    reuses, as jsonschema made it again for each item of an array.

    jsonschema builds a validator for every subschema it enters (its resolver, its
    list of keywords, an attrs object) and walks a ``$ref``'s JSON pointer each time
    it is followed: some 6 µs of a step's 9. Both depend only on the subschema and
    the resolver of the place it is in, never on the argument, so one check keeps
    them, by those objects' ids, with the objects (kept alive, so that an id is not
    reused while it is here), at most `_KEPT` of each (then it starts again).
    """

    __slots__ = ("evolved", "left", "lookups", "steps")

    def __init__(self, steps: int) -> None:
        self.steps = steps
        self.left = steps
        self.evolved: dict[tuple[int, int], tuple[Any, Any, Any]] = {}
        self.lookups: dict[tuple[int, str], tuple[Any, Any]] = {}


#: The most validators and references one check keeps (`_Check`).
_KEPT = 4096

#: The check under way (None: not counted).
_BUDGET: ContextVar[_Check | None] = ContextVar("tool_check_budget", default=None)


@contextmanager
def check_budget(steps: int) -> Iterator[None]:
    """Count the steps of the validations made inside: past ``steps``, the one under
    way raises `TooCostly`."""
    token = _BUDGET.set(_Check(steps))
    try:
        yield
    finally:
        _BUDGET.reset(token)


def _charge(steps: int) -> None:
    check = _BUDGET.get()
    if check is not None:
        check.left -= steps
        if check.left < 0:
            raise TooCostly(check.steps)


def _counted(keyword: Any) -> Any:
    """``keyword``'s function, charging a step and the length of its value first."""
    def counted(validator: Any, value: Any, instance: Any, schema: Any) -> Any:
        # A list or object of the schema (properties, required, allOf ...) is read
        # whole each time the keyword applies.
        _charge(1 + len(value) if isinstance(value, (list, dict)) else 1)
        return keyword(validator, value, instance, schema)
    return counted


def _evolve(self: Any, **changes: Any) -> Any:
    """jsonschema's ``evolve`` (a validator of a subschema), charged a step, and never
    of another class: a subschema's ``$schema`` does not pick stock jsonschema."""
    import attrs

    _charge(1)
    cls = type(self)
    changes.setdefault("schema", self.schema)
    for field in attrs.fields(cls):
        if field.init and field.alias not in changes:
            changes[field.alias] = getattr(self, field.name)
    return cls(**changes)


def _evolved(validator: Any, schema: Any, resolver: Any) -> Any:
    """The validator of ``schema`` at ``resolver``'s place (None: ``validator``'s own,
    ``schema`` a subschema of its schema), made once a check (`_Check`) and charged a
    step each time it is entered, as `_evolve` is."""
    DRAFT202012 = _lib().DRAFT202012

    check = _BUDGET.get()
    if check is None:
        if resolver is None:
            resolver = validator._resolver.in_subresource(DRAFT202012.create_resource(schema))
        return validator.evolve(schema=schema, _resolver=resolver)
    _charge(1)
    parent = validator._resolver if resolver is None else resolver
    key = (id(schema), id(parent))
    found = check.evolved.get(key)
    if found is not None and found[0] is schema and found[1] is parent:
        return found[2]
    if resolver is None:
        resolver = parent.in_subresource(DRAFT202012.create_resource(schema))
    cls = type(validator)
    # `_evolve`'s fields, uncharged: the step is charged above, hit or miss.
    evolved = cls(schema=schema, format_checker=validator.format_checker,
                  registry=validator._registry, resolver=validator._ref_resolver,
                  _resolver=resolver)
    if len(check.evolved) >= _KEPT:
        check.evolved.clear()
    check.evolved[key] = (schema, parent, evolved)
    return evolved


#: Characters of an error's message charged a step (`_descend`): about what one of
#: the keywords costs, to write them.
_MESSAGE_CHARS_A_STEP = 64


def _descend(self: Any, instance: Any, schema: Any, path: Any = None,
             schema_path: Any = None, resolver: Any = None) -> Iterator[Any]:
    """jsonschema's ``descend``, its subschema's validator made once a check
    (`_evolved`), and its keywords those that validator found applicable once."""
    ValidationError = _lib().ValidationError

    if schema is True:
        return
    if schema is False:
        yield ValidationError(f"False schema does not allow {instance!r}", validator=None,
                              validator_value=None, instance=instance, schema=schema)
        return
    evolved = _evolved(self, schema, resolver)
    for keyword, k, v in evolved._validators:
        for error in keyword(evolved, v, instance, schema) or ():
            if not error.schema_path:
                # Made by this keyword (not passed up from a subschema): its message
                # may hold the argument's whole repr, made once for each time the
                # keyword fails, which shared references multiply.
                _charge(len(error.message) // _MESSAGE_CHARS_A_STEP)
            # As jsonschema's: details set unless the keyword set them.
            error._set(validator=k, validator_value=v, instance=instance, schema=schema,
                       type_checker=evolved.TYPE_CHECKER)
            if k not in {"if", "$ref"}:
                error.schema_path.appendleft(k)
            if path is not None:
                error.path.appendleft(path)
            if schema_path is not None:
                error.schema_path.appendleft(schema_path)
            yield error


def _validate_reference(self: Any, ref: str, instance: Any) -> Iterator[Any]:
    """jsonschema's ``_validate_reference``, where the ``$ref`` leads looked up once a
    check (`_Check`): referencing walks its JSON pointer, segment by segment, and
    builds a resolver each time."""
    lib = _lib()

    check = _BUDGET.get()
    resolver = self._resolver
    key = (id(resolver), ref)
    found = check.lookups.get(key) if check is not None else None
    if found is not None and found[0] is resolver:
        resolved = found[1]
    else:
        try:
            resolved = resolver.lookup(ref)
        except lib.Unresolvable as err:
            raise lib.WrappedReferencingError(err) from err
        if check is not None:
            if len(check.lookups) >= _KEPT:
                check.lookups.clear()
            check.lookups[key] = (resolver, resolved)
    return _descend(self, instance, resolved.contents, resolver=resolved.resolver)


#: The Python types of each JSON Schema type's values (an integral float is an
#: ``integer`` too, and a bool is not a number), for `_type`.
_TYPES: dict[type, frozenset[str]] = {
    bool: frozenset({"boolean"}), int: frozenset({"integer", "number"}),
    float: frozenset({"number"}), str: frozenset({"string"}), list: frozenset({"array"}),
    dict: frozenset({"object"}), type(None): frozenset({"null"}),
}


def _type(validator: Any, types: Any, instance: Any, schema: Any) -> Iterator[Any]:
    """``type``: jsonschema's, its answer for plain JSON values looked up, where
    jsonschema asks its type checker (a persistent map and a function) for each."""
    ValidationError = _lib().ValidationError

    wanted = types if isinstance(types, list) else [types]
    kinds = _TYPES.get(type(instance))
    if kinds is None:
        ok = any(validator.is_type(instance, kind) for kind in wanted)
    else:
        ok = any(kind in kinds for kind in wanted) or (
            type(instance) is float and "integer" in wanted and instance.is_integer())
    if not ok:
        reprs = ", ".join(repr(kind) for kind in wanted)
        yield ValidationError(f"{instance!r} is not of type {reprs}")


#: Each `enum` list's value keys, by the list's id, with the list (kept alive so that
#: its id is not reused while it is here).
_ENUM_KEYS: dict[int, tuple[list[Any], frozenset[Any]]] = {}
#: The most `enum` lists `_enum_keys` keeps (then it starts again).
_ENUMS_KEPT = 1024


def _enum_keys(values: list[Any]) -> frozenset[Any]:
    """The `unique_key` of each of ``values``, made once for each list."""
    found = _ENUM_KEYS.get(id(values))
    if found is not None and found[0] is values:
        return found[1]
    keys = frozenset(map(unique_key, values))
    if len(_ENUM_KEYS) >= _ENUMS_KEPT:
        _ENUM_KEYS.clear()
    _ENUM_KEYS[id(values)] = (values, keys)
    return keys


def _enum(validator: Any, values: Any, instance: Any, schema: Any) -> Iterator[Any]:
    """``enum``: one lookup among the values' keys, whatever their number."""
    ValidationError = _lib().ValidationError

    if unique_key(instance) not in _enum_keys(values):
        yield ValidationError(f"{_brief(instance)} is not one of {_brief(values)}")


#: How many errors of each branch `anyOf` and `oneOf` keep as their error's context.
BRANCH_ERRORS = 16


def _branch_errors(validator: Any, instance: Any, subschema: Any, index: int) -> list[Any]:
    """The first `BRANCH_ERRORS` ways ``instance`` fails one branch of ``anyOf``/``oneOf``.

    jsonschema builds every error of every branch (the context of its error): an
    agent's array of 30,000 wrong items under ``{"anyOf": [array of strings, null]}``
    was 30,000 error objects on the service's loop, past the bound on the errors read.
    """
    return list(islice(validator.descend(instance, subschema, schema_path=index),
                       BRANCH_ERRORS))


def _any_of(validator: Any, any_of: list[Any], instance: Any, schema: Any) -> Iterator[Any]:
    """``anyOf``: jsonschema's, each branch's errors bounded (`_branch_errors`)."""
    ValidationError = _lib().ValidationError

    context: list[Any] = []
    for index, subschema in enumerate(any_of):
        errors = _branch_errors(validator, instance, subschema, index)
        if not errors:
            return
        context.extend(errors)
    yield ValidationError(f"{_brief(instance)} is not valid under any of the given schemas",
                          context=context)


def _one_of(validator: Any, one_of: list[Any], instance: Any, schema: Any) -> Iterator[Any]:
    """``oneOf``: jsonschema's, each branch's errors bounded (`_branch_errors`)."""
    ValidationError = _lib().ValidationError

    context: list[Any] = []
    valid: list[int] = []
    for index, subschema in enumerate(one_of):
        if valid:
            # One branch holds already: only whether another does too matters.
            if validator.evolve(schema=subschema).is_valid(instance):
                valid.append(index)
            continue
        errors = _branch_errors(validator, instance, subschema, index)
        if errors:
            context.extend(errors)
        else:
            valid.append(index)
    if not valid:
        yield ValidationError(f"{_brief(instance)} is not valid under any of the given "
                              "schemas", context=context)
    elif len(valid) > 1:
        yield ValidationError(f"{_brief(instance)} is valid under more than one of the "
                              f"given schemas (at {', '.join(map(str, valid))})")


@functools.cache
def _validator_class() -> Any:
    """Draft 2020-12 with this module's keywords in place of jsonschema's, each
    charged (`check_budget`), and an ``evolve`` that keeps to this class."""
    from jsonschema import Draft202012Validator
    from jsonschema.validators import extend

    ours = {
        "additionalProperties": _additional_properties,
        "anyOf": _any_of,
        "enum": _enum,
        "multipleOf": _multiple_of,
        "oneOf": _one_of,
        "pattern": _pattern,
        "patternProperties": _pattern_properties,
        "type": _type,
        "uniqueItems": _unique_items,
    }
    keywords = {**Draft202012Validator.VALIDATORS, **ours}
    counted = {name: _counted(fn) for name, fn in keywords.items()}
    # `enum` is one lookup, however many its values; `properties` charges the
    # names it looks at, not its whole list.
    counted["enum"] = _enum
    counted["properties"] = _properties
    cls = extend(Draft202012Validator, counted)
    # Set on this class only (subclassing validators is not jsonschema's API).
    cls.evolve = _evolve
    cls.descend = _descend
    cls._validate_reference = _validate_reference
    return cls


def _refuse(uri: str) -> Any:
    """The registry's ``retrieve``: nothing outside the schema itself."""
    from referencing.exceptions import NoSuchResource

    # referencing's classes are attrs classes, whose fields mypy does not see here.
    raise NoSuchResource(ref=uri)  # type: ignore[call-arg]


@functools.cache
def _registry() -> Any:
    """An empty registry that retrieves nothing (jsonschema's default fetches URLs)."""
    from referencing import Registry

    return Registry(retrieve=_refuse)  # type: ignore[call-arg]


def tool_validator(schema: dict[str, Any]) -> Any:
    """A validator of a tool's arguments against ``schema`` (one `schema_problems`
    found nothing in), which retrieves no schema from anywhere."""
    return _validator_class()(schema, registry=_registry())


#: The keywords of draft 2020-12 whose value is one schema, a list of schemas, or an
#: object of schemas: the places a schema holds schemas.
_ONE = ("additionalProperties", "contains", "contentSchema", "else", "if", "items", "not",
        "propertyNames", "then", "unevaluatedItems", "unevaluatedProperties")
_LIST = ("allOf", "anyOf", "oneOf", "prefixItems")
_MAP = ("$defs", "dependentSchemas", "patternProperties", "properties")
#: The keywords that point at another schema.
_REFS = ("$ref", "$dynamicRef")


def _subschemas(node: dict[str, Any],
                path: tuple[Any, ...]) -> Iterator[tuple[Any, tuple[Any, ...]]]:
    """The schemas ``node`` holds, each with its path."""
    for key in _ONE:
        if key in node:
            yield node[key], (*path, key)
    for key in _LIST:
        if isinstance(node.get(key), list):
            for i, child in enumerate(node[key]):
                yield child, (*path, key, i)
    for key in _MAP:
        if isinstance(node.get(key), dict):
            for name, child in node[key].items():
                yield child, (*path, key, name)


#: The keywords of draft 2020-12 whose schemas apply to the argument itself, not to
#: a part of it: followed in a loop (with a ``$ref``), they never reach a smaller part.
_SAME_ONE = ("else", "if", "not", "then")
_SAME_LIST = ("allOf", "anyOf", "oneOf")
_SAME_MAP = ("dependentSchemas",)


def _in_place(node: dict[str, Any],
              path: tuple[Any, ...]) -> Iterator[tuple[Any, tuple[Any, ...]]]:
    """The schemas ``node`` holds that apply to the argument it checks, each with its
    path (its references aside)."""
    for child, where in _subschemas(node, path):
        # The keyword is the first part of the path past the node's own.
        if where[len(path)] in _SAME_ONE + _SAME_LIST + _SAME_MAP and isinstance(child, dict):
            yield child, where


#: What `schema_problems` says of a reference that closes a loop of `_in_place` schemas.
_LOOP = ("closes a loop of references that never reaches into the argument: checking "
         "a call against it would recurse without end")


def _loops(schema: Any,
           inplace: dict[int, list[tuple[Any, tuple[Any, ...]]]]) -> list[tuple[Any, ...]]:
    """The path of each edge (``inplace``: schema to schema applied to the same argument)
    that closes a loop reachable from ``schema``. Iterative (any depth)."""
    closing: list[tuple[Any, ...]] = []
    done: set[int] = set()
    on_path: set[int] = set()
    # Each entry: a schema, and its edges not yet followed.
    stack: list[tuple[int, Iterator[tuple[Any, tuple[Any, ...]]]]] = [
        (id(schema), iter(inplace.get(id(schema), [])))]
    on_path.add(id(schema))
    while stack:
        here, edges = stack[-1]
        edge = next(edges, None)
        if edge is None:
            stack.pop()
            on_path.discard(here)
            done.add(here)
            continue
        child, where = edge
        if id(child) in on_path:
            closing.append(where)
        elif id(child) not in done:
            on_path.add(id(child))
            stack.append((id(child), iter(inplace.get(id(child), []))))
    return closing


def _node_problems(node: dict[str, Any], path: tuple[Any, ...],
                   budget: PatternBudget | None) -> Iterator[tuple[tuple[Any, ...], str]]:
    """What is wrong with one schema object itself, each with its path."""
    for key in _REFS:
        ref = node.get(key)
        if isinstance(ref, str) and not ref.startswith("#"):
            yield (*path, key), (f"{_brief(ref)} is not local: a {key} must start with '#' "
                                 "(the engine never fetches a schema)")
    if isinstance(node.get("pattern"), str):
        bad = _budgeted_problem(node["pattern"], budget)
        if bad is not None:
            yield (*path, "pattern"), bad
    if isinstance(node.get("patternProperties"), dict):
        for key in node["patternProperties"]:
            bad = _budgeted_problem(key, budget)
            if bad is not None:
                yield (*path, "patternProperties", key), bad


def _resource(node: Any) -> Any:
    """``node`` as a draft 2020-12 resource (its ``$id``, anchors and subschemas)."""
    from referencing.jsonschema import DRAFT202012

    return DRAFT202012.create_resource(node)


def _resolve(resolver: Any, ref: str) -> tuple[str | None, Any]:
    """Where a local ``ref`` leads, as (problem, None) or (None, the resolved: its
    schema and the resolver of the place it is in)."""
    from referencing.exceptions import Unresolvable

    try:
        resolved = resolver.lookup(ref)
    except Unresolvable:
        return f"{_brief(ref)} does not resolve: no such place in the schema", None
    if not isinstance(resolved.contents, (dict, bool)):
        return (f"{_brief(ref)} points at {_brief(resolved.contents)}, which is not a "
                f"schema (an object or a boolean)"), None
    return None, resolved


def schema_problems(schema: Any, budget: PatternBudget | None = None,
                    ) -> list[tuple[tuple[Any, ...], str]]:
    """What makes a tool's input schema unsafe to check, each with its path inside the
    schema; empty when `tool_validator` may check arguments against it.

    ``budget``: the instructions its manifest's patterns may still compile to, taken
    from as they are; None to compile each pattern whatever the others' (a manifest
    accepted already, checked again at a call).

    ``schema`` is one `Draft202012Validator.check_schema` accepts. Each `$ref` and
    `$dynamicRef` is followed once, so that what it points at is checked too.
    Iterative, so any depth is walked safely.
    """
    problems: list[tuple[tuple[Any, ...], str]] = []
    unevaluated: list[tuple[Any, ...]] = []
    patterned = False
    seen: set[int] = set()
    root = _registry().resolver_with_root(_resource(schema))
    # Schemas reached by a reference are walked after the tree, so that each
    # problem is named by its own path where it has one.
    later: list[tuple[Any, tuple[Any, ...], Any]] = []
    stack: list[tuple[Any, tuple[Any, ...], Any]] = [(schema, (), root)]
    # The schemas each schema applies to the very argument it is checking (by id).
    inplace: dict[int, list[tuple[Any, tuple[Any, ...]]]] = {}
    while stack or later:
        node, path, resolver = stack.pop() if stack else later.pop()
        if not isinstance(node, dict) or id(node) in seen:
            continue
        seen.add(id(node))
        if path and "$id" in node:
            resolver = resolver.in_subresource(_resource(node))
        found = list(_node_problems(node, path, budget))
        problems.extend(found)
        for key in _REFS:
            ref = node.get(key)
            if isinstance(ref, str) and not any(where[-1] == key for where, _ in found):
                bad, resolved = _resolve(resolver, ref)
                if bad is not None:
                    problems.append(((*path, key), bad))
                else:
                    later.append((resolved.contents, (*path, key), resolved.resolver))
                    inplace.setdefault(id(node), []).append((resolved.contents, (*path, key)))
        inplace.setdefault(id(node), []).extend(_in_place(node, path))
        if "unevaluatedProperties" in node:
            unevaluated.append((*path, "unevaluatedProperties"))
        patterned = patterned or "patternProperties" in node
        stack.extend((child, where, resolver) for child, where in _subschemas(node, path))
    problems.extend((where, _LOOP) for where in _loops(schema, inplace))
    if patterned:
        problems.extend((where, "cannot be checked in a schema that also has "
                                "patternProperties (jsonschema would match those with a "
                                "backtracking regex)") for where in unevaluated)
    return sorted(problems, key=lambda problem: [str(part) for part in problem[0]])
