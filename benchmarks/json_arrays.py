"""What reading JSON arrays costs the one-object-per-line path, and what an array input costs.

    python benchmarks/json_arrays.py [--events 200000] [--files 4] [--repeats 3]

Writes the events of benchmarks/input_formats.py as JSON lines, and the same events as lines
of 10-element arrays; times, as batch jobs on one SparkSession, every event read into its
payload columns with arrival time, partition and the malformed-record reason (asaql's
`_parse_records`, as the stream runs it):
- JSON lines through the array-aware reader (asaql/spark/sources/records.py `array_elements`);
- the same lines with the array step left out (a plain projection): the path before arrays;
- the array lines through the array-aware reader.
The variants run interleaved, best of the repeats, so a busy machine skews them alike.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))
from input_formats import events  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--events", type=int, default=200_000)
    parser.add_argument("--files", type=int, default=4)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()

    from pyspark.sql import functions as F

    import asaql.spark.sources.io as io
    from asaql.inputs.position import ELEMENT_BITS
    from asaql.runtime import columns as C
    from asaql.spark.sources.records import ARRAY_PROBLEM, array_elements, split_lines
    from asaql.spark.session.builder import build_session

    def without_arrays(lines):
        others = [c for c in lines.columns if c not in ("_asaql_text", C.LINE)]
        return lines.select(*others, F.shiftleft(F.col(C.LINE).cast("bigint"), ELEMENT_BITS)
                            .alias(C.LINE), "_asaql_text",
                            F.lit(None).cast("string").alias(ARRAY_PROBLEM))

    spark = build_session()
    rows = events(args.events)
    with tempfile.TemporaryDirectory() as tmp:
        folders = {name: Path(tmp) / name for name in ("lines", "arrays")}
        per_file = len(rows) // args.files
        for folder in folders.values():
            folder.mkdir()
        for number in range(args.files):
            part = rows[number * per_file:(number + 1) * per_file]
            (folders["lines"] / f"part-{number:03d}.jsonl").write_text(
                "".join(json.dumps(r) + "\n" for r in part))
            (folders["arrays"] / f"part-{number:03d}.jsonl").write_text(
                "".join(json.dumps(part[i:i + 10]) + "\n" for i in range(0, len(part), 10)))
        schema = io.infer_payload_schema(spark, str(folders["lines"]))

        def job(folder: Path, step):
            io.array_elements = step  # the reader's array step, or none
            lines = split_lines(spark.read.text(str(folder), wholetext=True)
                                .select("value", "_metadata"))
            parsed = io._parse_records(lines, schema, {})
            io.array_elements = array_elements
            return parsed.agg(F.count("*"), F.count(F.col(C.ERROR)),
                              F.sum(F.hash(*[f.name for f in schema.fields])))

        jobs = {"JSON lines, array-aware reader": job(folders["lines"], array_elements),
                "JSON lines, no array step": job(folders["lines"], without_arrays),
                "10-element array lines": job(folders["arrays"], array_elements)}
        best = {name: float("inf") for name in jobs}
        counts = {}
        for _ in range(args.repeats):
            for name, frame in jobs.items():
                started = time.perf_counter()
                counts[name] = frame.collect()[0]
                best[name] = min(best[name], time.perf_counter() - started)
        base = best["JSON lines, no array step"]
        print(f"{args.events} events in {args.files} files, best of {args.repeats}, interleaved")
        for name, seconds in best.items():
            print(f"{name:32s} {seconds:7.2f} s  {args.events / seconds:10,.0f} events/s  "
                  f"{seconds / base:5.2f}x  ({counts[name][0]} events, "
                  f"{counts[name][1]} malformed)")
    spark.stop()


if __name__ == "__main__":
    main()
