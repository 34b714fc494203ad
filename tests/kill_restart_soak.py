"""Many kill -9s at random moments, then the outputs compared to an uninterrupted run's: lost
and duplicated rows per output (tests/kill_restart.py says what runs). Exit 1 on a difference.

    PYTHONPATH=. python tests/kill_restart_soak.py --files 20 --events 200 --kills 10

Run it from the checkout under test: the `asaql run` processes import asaql from there.
"""

from __future__ import annotations

import argparse
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from kill_restart import (COMMITTED, QUERY, WRITTEN, compare, read_outputs,  # noqa: E402
                          run_arguments, run_with_kills, write_inputs)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=20, help="input files (one a micro-batch)")
    parser.add_argument("--events", type=int, default=200, help="readings per file")
    parser.add_argument("--kills", type=int, default=10)
    parser.add_argument("--max-delay", type=float, default=2.0,
                        help="a kill comes up to this many seconds after a commit")
    parser.add_argument("--seed", type=int, default=random.randrange(1_000_000))
    parser.add_argument("--keep", action="store_true", help="keep the work folder")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="asaql-kill-soak-"))
    print(f"seed {args.seed}, {args.files} files x {args.events} readings, "
          f"{args.kills} kills, work folder {work}", flush=True)
    inputs = write_inputs(work / "in", args.files, args.events, args.seed)
    query = work / "query.sql"
    query.write_text(QUERY, encoding="utf-8")

    started = time.monotonic()
    subprocess.run(run_arguments(query, inputs, work / "expected", work / "ck-expected"),
                   check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    print(f"uninterrupted run: {time.monotonic() - started:.0f} s", flush=True)
    started = time.monotonic()
    rng = random.Random(args.seed)
    moments = tuple(rng.choice((WRITTEN, COMMITTED)) for _ in range(args.kills))
    killed = run_with_kills(run_arguments(query, inputs, work / "killed", work / "ck-killed"),
                            work / "ck-killed", work / "killed", moments, rng, work,
                            max_delay=args.max_delay)
    print(f"killed run: {killed.kills} kills, {killed.runs} starts, "
          f"{time.monotonic() - started:.0f} s", flush=True)
    print(f"{'output':<14}{'expected':>10}{'lost':>8}{'duplicated':>12}")
    bad = False
    for alias, (expected, lost, duplicated) in compare(read_outputs(work / "expected"),
                                                       read_outputs(work / "killed")).items():
        print(f"{alias:<14}{expected:>10}{lost:>8}{duplicated:>12}")
        bad = bad or lost or duplicated
    if not args.keep and not bad:
        import shutil
        shutil.rmtree(work, ignore_errors=True)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
