"""A host pattern's ``*.`` never spans a public suffix: ``*.com`` is "any host" too (SPEC §2).

SPEC §2: a host pattern is an exact host name or ``*.`` plus a host name, and a
card cannot ask for "any host". ``*.com``, ``*.co.uk`` or ``*.workers.dev``
each match every site their suffix holds — hosts anyone can register, so a
card granted one could send what it reads to a server its author bought
yesterday, while the person reading the review sees what looks like one
domain. Found in round 26: such patterns were accepted (the base only had to
be a host name). The public suffix list (both its ICANN and its private
sections, and any name it does not know, as its own algorithm says) decides
what is a suffix; an exact host that is a suffix (``github.io``) is one host
and stays allowed.
"""

from __future__ import annotations

import pytest

from engine.core.hosts import host_pattern_problem
from engine.core.manifest import ManifestInvalid, parse_manifest

SPANNING = ["*.com", "*.COM.", "*.co.uk", "*.workers.dev", "*.github.io", "*.lan",
            "*.xn--p1ai", "*.рф", "*.s3.amazonaws.com"]
ONE_SITE = ["*.example.com", "*.evil.example", "*.api.github.com", "github.io", "com",
            "*.bbc.co.uk", "*.xn--e1afmkfd.xn--p1ai", "*.пример.рф"]


@pytest.mark.parametrize("pattern", SPANNING)
def test_a_wildcard_over_a_public_suffix_is_refused(pattern: str) -> None:
    problem = host_pattern_problem(pattern)
    assert problem is not None and "public suffix" in problem, problem


@pytest.mark.parametrize("pattern", ONE_SITE)
def test_a_wildcard_under_one_site_and_an_exact_host_stay_allowed(pattern: str) -> None:
    assert host_pattern_problem(pattern) is None


def test_the_manifest_names_the_pattern_and_where_it_is() -> None:
    raw = {"name": "acme.fetcher", "version": "1.0.0",
           "permissions": {"network": {"hosts": ["api.example.com", "*.com"]}}}
    with pytest.raises(ManifestInvalid) as err:
        parse_manifest(raw)
    text = str(err.value)
    assert '$.permissions.network.hosts[1]' in text and "*.com" in text, text
