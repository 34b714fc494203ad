"""Anomaly detection through real Spark streaming queries: ASA's documented query shape (a step
that scores, a SELECT that reads Score and IsAnomaly with GetRecordPropertyValue), per device,
run with every input file in one micro-batch and with one file per micro-batch. Both runs must
give the same rows, bit for bit, and the rows the model gives over each device's whole series
(tests/unit/test_anomaly_model.py checks the model itself)."""

from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone

import numpy as np

from asaql.runtime.anomaly import detect
from spark_harness import FIRST_MTIME, Replay, case_toml, split_files, write_case

S = 1_000_000
QUERY = """
WITH AnomalyDetectionStep AS
(
    SELECT seq, deviceId, CAST(value AS float) AS value,
        AnomalyDetection_SpikeAndDip(CAST(value AS float), 95, 20, 'spikesanddips')
            OVER (PARTITION BY deviceId LIMIT DURATION(second, 30)) AS SpikeAndDipScores,
        AnomalyDetection_ChangePoint(CAST(value AS float), 80, 20)
            OVER (PARTITION BY deviceId LIMIT DURATION(second, 25)) AS ChangePointScores
    FROM input TIMESTAMP BY EventTime
)
SELECT seq, deviceId, value,
    CAST(GetRecordPropertyValue(SpikeAndDipScores, 'Score') AS float) AS SpikeAndDipScore,
    CAST(GetRecordPropertyValue(SpikeAndDipScores, 'IsAnomaly') AS bigint) AS IsSpike,
    CAST(GetRecordPropertyValue(ChangePointScores, 'Score') AS float) AS ChangePointScore,
    CAST(GetRecordPropertyValue(ChangePointScores, 'IsAnomaly') AS bigint) AS IsChange
INTO events
FROM AnomalyDetectionStep
"""
DEVICES = {"a": 0, "b": 1}
PER_DEVICE = 90


def series() -> dict[str, list[float]]:
    rng = np.random.default_rng(42)
    a = list(rng.normal(20, 0.5, PER_DEVICE))
    a[50] = 35.0  # a spike
    b = list(rng.normal(5, 0.2, 45)) + list(rng.normal(12, 0.2, PER_DEVICE - 45))  # a shift
    return {"a": [round(v, 3) for v in a], "b": [round(v, 3) for v in b]}


def records(values: dict[str, list[float]]) -> list[dict]:
    # before the files' arrival times (FIRST_MTIME on), within the late tolerance
    start = datetime.fromtimestamp(FIRST_MTIME - 200, tz=timezone.utc)
    out = []
    for i in range(PER_DEVICE):
        for device in DEVICES:
            stamp = (start + timedelta(seconds=i)).strftime("%Y-%m-%dT%H:%M:%SZ")
            out.append({"seq": len(out), "deviceId": device, "EventTime": stamp,
                        "value": values[device][i]})
    return out


def expected(values: dict[str, list[float]]) -> dict[int, tuple]:
    """seq → the model's (SpikeAndDip score, alert, ChangePoint score, alert) per device."""
    out = {}
    for device, column in DEVICES.items():
        x = np.array(values[device])
        n = len(x)
        args = (x, np.zeros(n, np.int64), np.arange(n, dtype=np.int64) * S, np.ones(n, bool))
        spikes = detect("spikeanddip", (95.0, 20, "spikesanddips"), *args, 30 * S)
        changes = detect("changepoint", (80.0, 20, None), *args, 25 * S)
        for i in range(n):
            s, c = json.loads(spikes[i]), json.loads(changes[i])
            out[2 * i + column] = (s["Score"], s["IsAnomaly"], c["Score"], c["IsAnomaly"])
    return out


def test_anomaly_detection_on_spark_is_the_model_in_one_or_many_micro_batches(spark, tmp_path):
    values = series()
    sent = records(values)
    files = split_files(sent, [23] * 7 + [len(sent) - 23 * 7])
    toml = lambda most: case_toml("test_anomaly_spark", late_s=3600, ooo_s=0, action="adjust",
                                  max_files_per_trigger=most)
    replay = Replay(write_case(tmp_path / "one_batch", QUERY, {"": files}, toml(None)),
                    write_case(tmp_path / "file_by_file", QUERY, {"": files}, toml(1)))
    one, many = (out["events"] for out in replay.run(spark))
    assert len(one) == len(sent)
    key = lambda row: row["seq"]
    assert sorted(one, key=key) == sorted(many, key=key)  # identical rows, bit for bit
    want = expected(values)
    got = {row["seq"]: (row["SpikeAndDipScore"], row["IsSpike"], row["ChangePointScore"],
                        row["IsChange"]) for row in one}
    assert got == want
    flagged = lambda column: sorted(r["seq"] for r in one if r[column])
    assert 2 * 50 in flagged("IsSpike")  # device a's spike
    assert 2 * 45 + 1 in flagged("IsChange")  # device b's level shift
