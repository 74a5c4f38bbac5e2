"""A number of thousands of digits in a manifest or a case is refused in the person's
words: how many digits, and that no such number is read — never Python's advice
to call ``sys.set_int_max_str_digits()``, which is nothing the person can do.
(Found in round 20: `review` and `replay` of a file holding a 5,000-digit number
said "Exceeds the limit (4300 digits) for integer string conversion … use
sys.set_int_max_str_digits() to increase the limit".)
"""

from __future__ import annotations

from pathlib import Path

import pytest

from engine.app.casefile import CaseInvalid, load_case
from engine.app.cli import main

NUMBER = "9" * 5000


def test_review_names_the_long_number_plainly(tmp_path: Path,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "manifest.json"
    path.write_text('{"name": "acme.x", "version": "1.0.0", "permissions": {}, "n": '
                    f"{NUMBER}}}")
    assert main(["review", str(path)]) == 2
    err = capsys.readouterr().err
    assert "5000 digits" in err and "sys." not in err, err


def test_a_case_names_the_long_number_plainly(tmp_path: Path) -> None:
    path = tmp_path / "case.json"
    path.write_text(f'{{"name": "c", "steps": [{{"do": "history", "t": {NUMBER}}}]}}')
    with pytest.raises(CaseInvalid) as caught:
        load_case(path)
    assert "5000 digits" in str(caught.value) and "sys." not in str(caught.value)
