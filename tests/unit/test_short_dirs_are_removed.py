"""The tests' short folders under /tmp go when the test process ends (`tests.shortdirs`)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_a_short_dir_and_what_is_in_it_are_gone_when_the_process_exits() -> None:
    made = subprocess.run(
        [sys.executable, "-c",
         "from tests.shortdirs import short_dir\n"
         "d = short_dir('probe')\n"
         "(d / 's').mkdir(); (d / 's' / 'f').write_text('x')\n"
         "print(d)"],
        cwd=ROOT, capture_output=True, text=True, check=True, timeout=60)
    folder = Path(made.stdout.strip())
    assert folder.is_absolute() and str(folder).startswith("/tmp/")
    assert len(str(folder / "s" / "serve.sock")) < 100  # fits a Unix socket's path
    assert not folder.exists() and not folder.parent.exists()
