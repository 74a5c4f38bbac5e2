"""A host name's every label is letters, digits and hyphens, whole: no newline inside a name.

SPEC §2 host patterns and §8.1 secrets are for host names; bad input gets a
clear error and changes nothing. A secret stored for ``api\\n.example.com``
names no host a URL can reach (URL parsing drops newlines), so it could
never be sent, and the operator was not told.

Found in round 19: the label pattern ended in ``$``, which also matches
before a final newline, so a label ``api\\n`` passed: `host_pattern_problem`
accepted ``api\\n.example.com`` and the secret vault stored it.
"""

from __future__ import annotations

import pytest

from engine.core.hosts import host_pattern_problem, matches
from engine.store.vault import SecretVault

NEWLINED = ["api\n.example.com", "*.example\n.com", "a.b\n.example.com"]


@pytest.mark.parametrize("host", NEWLINED, ids=repr)
def test_a_label_ending_in_a_newline_is_no_host_name(host: str) -> None:
    assert host_pattern_problem(host) is not None
    assert SecretVault.problem("TOK", host.removeprefix("*.")) is not None


def test_a_newlined_label_matches_no_pattern() -> None:
    assert not matches("*.example.com", "a\n.example.com")
    assert matches("*.example.com", "a.example.com")
