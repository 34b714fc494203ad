"""MATCH_RECOGNIZE through real Spark streaming queries: two devices interleaved, run with every
input file in one micro-batch and with one file per micro-batch. Both runs must give the same
rows, and the rows a plain reference gives: per device, for each start row, the longest run of
rows within LIMIT DURATION that Python's `re` fully matches (DEFINEs here read one letter)."""

from __future__ import annotations

import random
import re
from datetime import datetime, timedelta, timezone

from spark_harness import FIRST_MTIME, Replay, case_toml, split_files, write_case

DURATION_S = 6
QUERY = f"""
SELECT *
INTO events
FROM input TIMESTAMP BY EventTime
MATCH_RECOGNIZE (
    LIMIT DURATION (second, {DURATION_S})
    PARTITION BY deviceId
    MEASURES First(seq) AS firstSeq, Last(seq) AS lastSeq, Count(*) AS rows,
        Count(B.seq) AS bs, Classifier() AS last
    AFTER MATCH SKIP TO NEXT ROW
    PATTERN (A (B | C)+ A?)
    DEFINE
        A AS A.letter = 'a',
        B AS B.letter = 'b',
        C AS C.letter = 'c'
) AS M
"""
REGEX = re.compile("a(?:b|c)+a?")


def records() -> list[dict]:
    rng = random.Random(7)
    start = datetime.fromtimestamp(FIRST_MTIME - 400, tz=timezone.utc)
    out = []
    second = 0
    while len(out) < 160:
        second += rng.choice([1, 1, 1, 2, 4])
        for device in ("d1", "d2"):
            if rng.random() < 0.8:
                stamp = (start + timedelta(seconds=second)).strftime("%Y-%m-%dT%H:%M:%SZ")
                out.append({"seq": len(out), "deviceId": device, "EventTime": stamp,
                            "second": second, "letter": rng.choice("aabc")})
    return out


def reference(sent: list[dict]) -> list[dict]:
    out = []
    for device in ("d1", "d2"):
        rows = [r for r in sent if r["deviceId"] == device]
        letters = "".join(r["letter"] for r in rows)
        for s in range(len(rows)):
            ends = [e for e in range(s, len(rows))
                    if rows[e]["second"] - rows[s]["second"] < DURATION_S
                    and REGEX.fullmatch(letters[s:e + 1])]
            if ends:
                e = max(ends)
                out.append({"deviceId": device, "firstSeq": rows[s]["seq"],
                            "lastSeq": rows[e]["seq"], "rows": e - s + 1,
                            "bs": letters[s:e + 1].count("b"),
                            "last": {"a": "A", "b": "B", "c": "C"}[letters[e]]})
    return out


def test_match_recognize_on_spark_is_the_reference_in_one_or_many_micro_batches(spark,
                                                                                   tmp_path):
    sent = records()
    files = split_files(sent, [23] * 6 + [len(sent) - 23 * 6])
    toml = lambda most: case_toml("test_match_recognize_spark", late_s=3600, ooo_s=0,
                                  action="adjust", max_files_per_trigger=most)
    replay = Replay(write_case(tmp_path / "one_batch", QUERY, {"": files}, toml(None)),
                    write_case(tmp_path / "file_by_file", QUERY, {"": files}, toml(1)))
    one, many = (out["events"] for out in replay.run(spark))
    key = lambda row: (row["deviceId"], row["firstSeq"])
    want = sorted(reference(sent), key=key)
    assert len(want) > 20  # the log has matches, overlapping ones among them
    assert sorted(one, key=key) == want
    assert sorted(many, key=key) == want
