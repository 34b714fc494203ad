"""The anomaly detection models (asaql/runtime/anomaly.py) without Spark: the vectorised model
against the one-event-at-a-time reference of ML.NET's detectors (tests/reference_anomaly.py),
and the behaviour ASA documents — spikes, dips and level shifts flagged, stationary data not,
per partition, within LIMIT DURATION, historySize and confidence respected."""

from __future__ import annotations

import json
import math
from datetime import datetime
from pathlib import Path

import numpy as np
import pytest

import reference_anomaly as reference
from asaql.runtime.anomaly import detect

S = 1_000_000
FOREVER = 10 ** 15


def run(function, values, confidence, history, mode=None, duration=FOREVER, groups=None,
        fed=None, seconds=None):
    """(Score, IsAnomaly) per value (None where not fed); one event a second."""
    n = len(values)
    groups = np.zeros(n, np.int64) if groups is None else np.asarray(groups, np.int64)
    times = np.arange(n, dtype=np.int64) * S if seconds is None else \
        np.asarray(seconds, np.int64) * S
    fed = np.ones(n, bool) if fed is None else np.asarray(fed, bool)
    out = detect(function, (confidence, history, mode), np.asarray(values, float), groups,
                 times, fed, duration)
    return [None if o is None else (json.loads(o)["Score"], json.loads(o)["IsAnomaly"])
            for o in out]


def alerts(results) -> list[int]:
    return [i for i, r in enumerate(results) if r is not None and r[1]]


def threshold(confidence, history) -> float:
    return math.exp(history * (math.log(0.1) - 0.9 * math.log(1 - confidence / 100)))


def noise(seed, n, mean=10.0, sd=1.0) -> list[float]:
    return list(np.random.default_rng(seed).normal(mean, sd, n))


@pytest.mark.parametrize("function,mode", [("spikeanddip", "spikes"), ("spikeanddip", "dips"),
                                           ("spikeanddip", "spikesanddips"),
                                           ("changepoint", None)])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_same_as_the_one_event_at_a_time_reference(function, mode, seed):
    values = noise(seed, 150) + noise(seed + 10, 150, mean=16)
    values[60], values[90] = 25.0, -3.0
    confidence, history = [(80, 30), (90, 20), (95, 40)][seed]
    ours = run(function, values, confidence, history, mode)
    theirs = reference.detect(function, values, confidence, history, mode)
    for k, (a, b) in enumerate(zip(ours, theirs)):
        assert a[0] == pytest.approx(b[0], rel=1e-6, abs=1e-12), k  # erfc's approximation
    if function == "spikeanddip":
        assert alerts(ours) == alerts(theirs)
    else:  # ML.NET alerts again every historySize events while the martingale stays high
        assert set(alerts(ours)) <= set(alerts(theirs))
        assert alerts(ours)[:1] == alerts(theirs)[:1]
        for k in set(alerts(theirs)) - set(alerts(ours)):
            assert any(ours[j][0] >= threshold(confidence, history)
                       for j in range(k - history + 1, k)), k


def test_spike_and_dip_are_flagged_by_their_modes():
    values = noise(3, 200)
    values[150], values[170] = 30.0, -10.0
    both = alerts(run("spikeanddip", values, 99, 100, "spikesanddips"))
    spikes = alerts(run("spikeanddip", values, 99, 100, "spikes"))
    dips = alerts(run("spikeanddip", values, 99, 100, "dips"))
    assert 150 in both and 170 in both
    assert 150 in spikes and 170 not in spikes
    assert 170 in dips and 150 not in dips


def test_steady_and_stationary_data_is_not_flagged():
    assert alerts(run("spikeanddip", [5.0] * 300, 95, 50, "spikesanddips")) == []
    assert alerts(run("changepoint", [5.0] * 300, 80, 50)) == []
    stationary = noise(4, 600)
    # p-values of stationary data fall under 1 − confidence about that often, not more
    assert len(alerts(run("spikeanddip", stationary, 99, 120, "spikesanddips"))) <= 6
    assert alerts(run("changepoint", stationary, 80, 120)) == []


def test_a_level_shift_is_one_change_point():
    values = noise(2, 300) + noise(5, 300, mean=18)
    flagged = alerts(run("changepoint", values, 80, 120))
    assert len(flagged) == 1 and 300 <= flagged[0] < 310


def test_no_alert_before_history_size_events():
    values = [1.0] * 5 + [50.0] + [1.0] * 40
    results = run("spikeanddip", values, 90, 10, "spikes")
    assert results[5][0] == pytest.approx(1e-8)  # scored as anomalous …
    assert alerts(results) == []  # … but the model is not ready before 10 events
    values[30] = 50.0
    assert alerts(run("spikeanddip", values, 90, 10, "spikes")) == [30]


def test_lower_confidence_flags_more():
    values = noise(6, 400)
    counts = [len(alerts(run("spikeanddip", values, c, 100, "spikesanddips")))
              for c in (70, 90, 99)]
    assert counts[0] > counts[1] > counts[2]
    assert alerts(run("spikeanddip", values, 100, 100, "spikesanddips")) == []


def test_history_size_bounds_what_the_model_remembers():
    # the model sees at most historySize events: a series equals its last ones run alone
    values = noise(7, 120)
    whole = run("spikeanddip", values, 90, 20, "spikesanddips")
    tail = run("spikeanddip", values[60:], 90, 20, "spikesanddips")
    assert whole[100:] == tail[40:]


def test_limit_duration_bounds_the_history():
    values = noise(8, 100)
    within = run("spikeanddip", values, 90, 50, "spikes", duration=10 * S)
    for start in (30, 70):  # an event sees the 9 seconds before it, not more
        alone = run("spikeanddip", values[start - 9:start + 1], 90, 50, "spikes")
        assert within[start] == alone[-1]


def test_partitions_learn_apart():
    a, b = noise(9, 100), noise(10, 100, mean=500)
    b[80] = 600.0
    groups = [0] * 100 + [1] * 100
    together = run("spikeanddip", a + b, 95, 50, "spikes", groups=groups)
    assert together[:100] == run("spikeanddip", a, 95, 50, "spikes")
    assert together[100:] == run("spikeanddip", b, 95, 50, "spikes")
    assert 180 in alerts(together)


def test_events_not_fed_get_null_and_are_not_learnt():
    values = noise(11, 60)
    fed = [i % 3 != 0 for i in range(60)]
    results = run("changepoint", values, 80, 10, fed=fed)
    assert [r is None for r in results] == [not f for f in fed]
    kept = run("changepoint", [v for v, f in zip(values, fed) if f], 80, 10)
    assert [r for r in results if r is not None] == kept


def test_the_documented_example_golden_is_the_reference():
    """tests/golden/cases/doc_anomaly_spike_and_dip: its expected rows (written by asaql) are
    ML.NET's detector run one event at a time over the 2-minute window."""
    folder = Path(__file__).resolve().parents[1] / "golden" / "cases" / "doc_anomaly_spike_and_dip"
    sent = [json.loads(line) for line in (folder / "input.jsonl").read_text().splitlines()]
    rows = [json.loads(line) for line in (folder / "expected.jsonl").read_text().splitlines()]
    seconds = [int(datetime.fromisoformat(r["EventEnqueuedUtcTime"]).timestamp()) for r in sent]
    theirs = reference.detect("spikeanddip", [r["temperature"] for r in sent], 95, 120,
                              "spikesanddips", times=seconds, duration=120)
    assert [r["temp"] for r in rows] == [r["temperature"] for r in sent]
    for row, (score, alert) in zip(rows, theirs):
        assert row["SpikeAndDipScore"] == pytest.approx(score, rel=1e-6, abs=1e-12)
        assert row["IsSpikeAndDipAnomaly"] == alert
    assert [k for k, r in enumerate(rows) if r["IsSpikeAndDipAnomaly"]] == [150, 175]
