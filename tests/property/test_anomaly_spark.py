"""Anomaly detection through real Spark streaming queries: ASA's documented query shape (a step
that scores, a SELECT that reads Score and IsAnomaly with GetRecordPropertyValue), per device,
run with every input file in one micro-batch and with one file per micro-batch. Both runs must
give the same rows, bit for bit, and the rows the model gives over each device's whole series
(tests/unit/test_anomaly_model.py checks the model itself)."""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from pathlib import Path

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from asaql.runtime.anomaly import detect
import reference_policy as ref
from event_logs import OneInputLog, device_fields, event_log
from spark_harness import (FIRST_MTIME, Replay, case_toml, file_sizes, property_settings,
                           replayed, split_files, write_case)

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


# ---------------------------------------------------------------- random logs and policies
EXAMPLES = int(os.environ.get("ASAQL_ANOMALY_EXAMPLES", "4"))


@dataclass(frozen=True)
class Detector:
    function: str  # spikeanddip, changepoint
    confidence: int
    history: int
    mode: str | None
    by_device: bool
    when: int | None  # WHEN value < when
    duration_s: int

    def sql(self) -> str:
        name = "AnomalyDetection_SpikeAndDip" if self.function == "spikeanddip" else \
            "AnomalyDetection_ChangePoint"
        mode = f", '{self.mode}'" if self.mode else ""
        over = ["PARTITION BY deviceId"] if self.by_device else []
        over.append(f"LIMIT DURATION(second, {self.duration_s})")
        if self.when is not None:
            over.append(f"WHEN value < {self.when}")
        return (f"{name}(value, {self.confidence}, {self.history}{mode}) "
                f"OVER ({' '.join(over)})")


@dataclass(frozen=True)
class Scenario(OneInputLog):
    records: tuple[dict, ...]
    file_sizes: tuple[int, ...]
    late_s: int
    ooo_s: int
    action: str
    scope: str
    over: tuple[str, ...]
    detectors: tuple[Detector, ...]

    def query(self) -> str:
        over = f" OVER {', '.join(self.over)}" if self.over else ""
        partition = " PARTITION BY PartitionId" if self.scope == "partition" else ""
        steps = "".join(f",\n       {d.sql()} AS d{i}" for i, d in enumerate(self.detectors))
        reads = "".join(
            f",\n       CAST(GetRecordPropertyValue(d{i}, 'Score') AS float) AS s{i},"
            f"\n       CAST(GetRecordPropertyValue(d{i}, 'IsAnomaly') AS bigint) AS a{i}"
            for i in range(len(self.detectors)))
        return (f"WITH scored AS (\nSELECT seq{steps}\n"
                f"FROM input TIMESTAMP BY EventTime{over}{partition}\n)\n"
                f"SELECT seq{reads}\nINTO events\nFROM scored\n")


@st.composite
def detectors(draw) -> Detector:
    function = draw(st.sampled_from(["spikeanddip", "changepoint"]))
    return Detector(function, draw(st.sampled_from([50, 80, 95])), draw(st.integers(1, 6)),
                    draw(st.sampled_from(["spikes", "dips", "spikesanddips"]))
                    if function == "spikeanddip" else None,
                    draw(st.booleans()), draw(st.sampled_from([None, None, 30])),
                    draw(st.integers(2, 30)))


@st.composite
def scenarios(draw) -> Scenario:
    partitions, devices = draw(st.integers(1, 3)), draw(st.integers(1, 3))
    scope = draw(st.sampled_from(["combined", "partition", "substream"]))
    fields = device_fields(draw, devices, partitions, False,
                           values=st.one_of(st.none(), st.integers(0, 40),
                                            st.floats(0, 40).map(lambda v: round(v, 2))))
    count = draw(st.integers(5, 40))
    records = event_log(draw, count, fields)
    records[0]["value"] = 1.5  # the field reads as a number
    over = ("deviceId",) if scope == "substream" else ()
    return Scenario(tuple(records), file_sizes(draw, st, count, most_files=5),
                    draw(st.integers(0, 20)), draw(st.integers(0, 10)),
                    draw(st.sampled_from(["adjust", "drop"])), scope, over,
                    tuple(draw(st.lists(detectors(), min_size=1, max_size=3))))


def model_rows(scenario: Scenario, case_dir: Path) -> dict[int, tuple]:
    """seq → (Score, IsAnomaly) per detector: the model over the events the policy keeps, per
    partition (and watermark scope), in System.Timestamp then arrival order."""
    events = ref.read_events(ref.input_files(case_dir), over=scenario.over)
    outcomes = ref.apply_policy(events, late_us=scenario.late_s * S, ooo_us=scenario.ooo_s * S,
                                early_us=60 * S, action=scenario.action)
    kept = sorted((o for o in outcomes if not o.dropped),
                  key=lambda o: (o.system_timestamp_us, ref.arrival_order(o.event)))
    out = {o.event.payload["seq"]: [] for o in kept}
    for d in scenario.detectors:
        keys = [(None if scenario.scope == "combined" else o.event.key,
                 o.event.payload["deviceId"] if d.by_device else None) for o in kept]
        codes = {k: n for n, k in enumerate(dict.fromkeys(keys))}
        group = np.array([codes[k] for k in keys], np.int64)
        order = np.argsort(group, kind="stable")
        values = np.array([np.nan if o.event.payload.get("value") is None
                           else float(o.event.payload["value"]) for o in kept])
        fed = ~np.isnan(values)
        if d.when is not None:
            fed &= np.nan_to_num(values, nan=np.inf) < d.when
        stamps = np.array([o.system_timestamp_us for o in kept], np.int64)
        results = detect(d.function, (float(d.confidence), d.history, d.mode), values[order],
                         group[order], stamps[order], fed[order], d.duration_s * S)
        for position, result in zip(order, results):
            record = json.loads(result) if result is not None else {}
            out[kept[position].event.payload["seq"]] += [record.get("Score"),
                                                         record.get("IsAnomaly")]
    return {seq: tuple(v) for seq, v in out.items()}


@property_settings(EXAMPLES)
@given(scenario=scenarios())
def test_anomaly_detection_in_any_scope_and_policy_is_the_model(scenario, spark, tmp_path):
    with replayed(tmp_path, scenario.query(), scenario.case_toml,
                  {"": scenario.files()}) as replay:
        want = model_rows(scenario, replay.one_batch)
        one, many = (out["events"] for out in replay.run(spark))
    assert sorted(one, key=lambda r: r["seq"]) == sorted(many, key=lambda r: r["seq"])
    got = {row["seq"]: tuple(row[f"{c}{i}"] for i in range(len(scenario.detectors))
                             for c in "sa") for row in one}
    assert len(got) == len(one), "an event came out twice"
    assert got == want
