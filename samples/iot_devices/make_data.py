"""Write input.jsonl for the iot_devices sample: 8 devices, 4 event-hub partitions, ~300 readings.

    python samples/iot_devices/make_data.py

Deterministic (fixed seed, standard library only): running it again rewrites the same bytes.
Each device reports every ~10 s from its own clock and always sends to the same partition. The
event hub stamps EventEnqueuedUtcTime on arrival, increasing within each partition. Mixed in:
- late readings: stuck in a device's buffer for 6-45 s (more than the 5 s late tolerance);
- early readings: a device clock jumps 5.5-10 min ahead (beyond ASA's 5-minute early window);
- asynchronous bursts: three readings 1.5 s apart sent at once and enqueued in random order, so
  some arrive out of order (beyond or within the 2 s out-of-order tolerance).
"""

from __future__ import annotations

import json
import random
from datetime import datetime, timedelta, timezone
from pathlib import Path

SEED = 20210101
START = datetime(2021, 1, 1, 8, 0, 0, tzinfo=timezone.utc)
DEVICES = [f"device-{n:02d}" for n in range(1, 9)]
PARTITIONS = 4
READINGS_PER_DEVICE = 36
PERIOD_S = 10.0
LATE_READINGS = 12
EARLY_READINGS = 4
BURSTS = 8
BASE_TEMPERATURE = [21.5, 23.0, 24.5, 26.0, 22.0, 27.5, 20.5, 25.0]


def iso_ms(milliseconds: int) -> str:
    """Milliseconds after START -> '2021-01-01T08:00:03.250Z' (as devices and the hub send them)."""
    moment = START + timedelta(milliseconds=milliseconds)
    return f"{moment:%Y-%m-%dT%H:%M:%S}.{moment.microsecond // 1000:03d}Z"


def device_readings(rng: random.Random, index: int, late: set, early: set, bursts: set) -> list[dict]:
    """(event time, arrival time) in seconds after START, plus the measured values, for one device."""
    readings = []
    clock = rng.uniform(0.0, PERIOD_S)
    for n in range(READINGS_PER_DEVICE):
        if (index, n) in bursts:
            # Three readings buffered and sent asynchronously: enqueued in any order.
            send = clock + 3.0
            times = [(clock + 1.5 * k, send + rng.uniform(0.1, 1.0)) for k in range(3)]
        else:
            delay = rng.uniform(6.0, 45.0) if (index, n) in late else rng.uniform(0.05, 1.5)
            stamp = clock + (rng.uniform(330.0, 600.0) if (index, n) in early else 0.0)
            times = [(stamp, clock + delay)]
        for event_s, arrival_s in times:
            readings.append({
                "event_s": event_s,
                "arrival_s": arrival_s,
                "temperature": round(BASE_TEMPERATURE[index] + rng.gauss(0.0, 1.2), 1),
                "humidity": round(rng.uniform(35.0, 65.0), 1),
            })
        clock += PERIOD_S + rng.uniform(-1.5, 1.5)
    return readings


def enqueue(readings: list[dict]) -> None:
    """The event hub's EventEnqueuedUtcTime: millisecond clock, strictly increasing in a partition."""
    previous_ms = -1
    for reading in sorted(readings, key=lambda r: r["arrival_s"]):
        arrival_ms = max(round(reading["arrival_s"] * 1000), previous_ms + 1)
        reading["arrival_ms"] = previous_ms = arrival_ms


def make_events() -> list[dict]:
    rng = random.Random(SEED)
    slots = [(d, n) for d in range(len(DEVICES)) for n in range(2, READINGS_PER_DEVICE - 2)]
    chosen = rng.sample(slots, LATE_READINGS + EARLY_READINGS + BURSTS)
    late = set(chosen[:LATE_READINGS])
    early = set(chosen[LATE_READINGS:LATE_READINGS + EARLY_READINGS])
    bursts = set(chosen[LATE_READINGS + EARLY_READINGS:])

    by_partition: dict[int, list[dict]] = {p: [] for p in range(PARTITIONS)}
    for index, device in enumerate(DEVICES):
        partition = index % PARTITIONS  # a device always sends to the same partition
        for reading in device_readings(rng, index, late, early, bursts):
            by_partition[partition].append({**reading, "deviceId": device, "PartitionId": partition})
    for readings in by_partition.values():
        enqueue(readings)

    everything = [r for readings in by_partition.values() for r in readings]
    everything.sort(key=lambda r: (r["arrival_ms"], r["PartitionId"]))  # partitions interleave
    return [
        {
            "deviceId": r["deviceId"],
            "temperature": r["temperature"],
            "humidity": r["humidity"],
            "EventTime": iso_ms(round(r["event_s"] * 1000)),
            "EventEnqueuedUtcTime": iso_ms(r["arrival_ms"]),
            "PartitionId": r["PartitionId"],
        }
        for r in everything
    ]


def main() -> None:
    target = Path(__file__).with_name("input.jsonl")
    events = make_events()
    target.write_text("".join(json.dumps(e) + "\n" for e in events), encoding="utf-8")
    print(f"wrote {len(events)} events to {target}")


if __name__ == "__main__":
    main()
