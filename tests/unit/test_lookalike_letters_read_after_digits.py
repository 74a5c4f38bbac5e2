"""A look-alike letter made of a look-alike digit is read as what it looks like (README,
decisions; `engine.core.lookalike`).

Rule: a name's skeleton reads each digit as the letter it looks like (``1`` as ``l``,
``0`` as ``o``) before the runs of letters that read as another (``cl`` as ``d``,
``rn`` as ``m``, ``vv`` as ``w``), so a run made with a digit is folded as the same
run of letters: ``acme.c1ock`` is ``acme.clock`` (and ``acme.dock``) to a person,
and refused beside it.

(Found in round 21: the runs were folded before the digits, so ``acme.c1ock``
became ``acmeclock`` while ``acme.clock`` became ``acmedock``, and the look-alike
was offered beside the installed package.)
"""

from __future__ import annotations

import pytest

from engine.core.lookalike import lookalike, skeleton


@pytest.mark.parametrize(("known", "offered"), [
    ("acme.clock", "acme.c1ock"),
    ("acme.dock", "acme.c1ock"),
    ("acme.clock", "acme.c10ck"),
])
def test_a_run_made_with_a_digit_is_a_lookalike(known: str, offered: str) -> None:
    assert skeleton(known) == skeleton(offered)
    assert lookalike(offered, [known]) == known


def test_names_that_differ_in_what_a_person_sees_stay_apart() -> None:
    assert lookalike("acme.clock", ["acme.cock", "acme.lock", "acme.c1"]) is None
