"""A soak of kills: ``arrowgate serve`` SIGKILLed again and again mid-burst (round 30).

Each round restarts the service on the same store, bursts at it from several clients
(two cards' calls and prompts, an operator granting and revoking, an agent's tool calls:
`tests.durability.servicekills`), kills it at a random moment after the clients had
answers (seeded), and checks what it answered: every answered call's log row, every
accepted prompt's row and counted rate event, every tool call's row, the last answered
grant or revoke; then ``log verify`` with the anchor. The suite runs one kill a store
(tests/durability/test_a_killed_service_loses_nothing_it_answered.py); this runs many.

    .venv/bin/python -m bench.crash_soak --kills 30 --seed 1
    .venv/bin/python -m bench.crash_soak --kills 30 --seed 1 --store postgresql://…

Prints one line a kill and exits 1 at the first one whose answers do not hold.
"""

from __future__ import annotations

import argparse
import os
import random
import sys
import tempfile
from pathlib import Path

from engine.app.cli import main as cli
from tests.durability.servicekills import (
    Answers,
    burst_then_kill,
    canvas,
    check_answers,
    start_service,
)
from tests.durability.targets import Target


def main(argv: list[str] | None = None) -> int:
    """Run the soak; 0 when every kill's answers held."""
    parser = argparse.ArgumentParser(prog="bench.crash_soak", description=__doc__)
    parser.add_argument("--kills", type=int, default=20)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--store", help="a postgresql:// URL of an empty database "
                        "(default: a SQLite file in a new temporary folder)")
    args = parser.parse_args(argv)
    rng = random.Random(args.seed)
    home = Path(tempfile.mkdtemp(prefix="arrowgate-soak-"))
    # The service's anchor of a PostgreSQL store goes beside $ARROWGATE_DB.
    os.environ["ARROWGATE_DB"] = str(home / "home.db")
    target = (Target("postgresql", home / "unused.db", args.store) if args.store
              else Target("sqlite", home / "app.db"))
    token_file = home / "operator-token"
    calls = 0
    try:
        for kill in range(args.kills):
            service = start_service(target, token_file)
            if kill == 0:
                (home / "ws").mkdir()
                with service.client() as op:
                    agent_token = canvas(op, home / "ws")
            answers = Answers()
            burst_then_kill(service, agent_token, answers, tag=f"k{kill}",
                            calls=rng.randint(1, 80), pause=rng.uniform(0.0, 0.3))
            try:
                check_answers(target, answers)
            except AssertionError as exc:
                print(f"kill {kill}: FAILED: {exc} (store {target.location})")
                return 1
            if cli(["log", "verify", *target.args()]) != 0:
                print(f"kill {kill}: FAILED: log verify (store {target.location})")
                return 1
            calls += len(answers.calls)
            print(f"kill {kill}: {len(answers.calls)} calls, {len(answers.tools)} tool calls, "
                  f"{sum(code == 200 for _v, code in answers.consent)} grants and revokes "
                  "answered; all held", flush=True)
    finally:
        target.close()
    print(f"{args.kills} kills (seed {args.seed}), {calls} answered calls: none lost")
    return 0


if __name__ == "__main__":
    sys.exit(main())
