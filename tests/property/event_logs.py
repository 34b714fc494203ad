"""Random event-hub logs for the Spark property tests: records in arrival order, arrival times
non-decreasing (ties included), event times around them — mostly on time, some late, some
early — as an event hub replay gives them."""

from __future__ import annotations

from typing import Callable

from hypothesis import strategies as st

import reference_policy as ref  # tests/reference_policy.py, on sys.path through tests/conftest.py
from spark_harness import case_toml, split_files

SECOND_MS = 1_000
BASE_US = ref.parse_iso("2021-01-01T00:00:00Z")

# Event time relative to arrival, in ms: mostly around on time, some late by up to 30 s (the late
# tolerance is 0-20 s), some early by 50-90 s (the early window, when on, is 60 s).
OFFSETS_MS = st.one_of(
    st.integers(-3, 1).map(lambda s: s * SECOND_MS),
    st.integers(-30, -1).map(lambda s: s * SECOND_MS),
    st.integers(50, 90).map(lambda s: s * SECOND_MS),
    st.integers(-30_000, 5_000),  # any millisecond
)
ARRIVAL_STEPS_S = st.sampled_from([0, 0, 1, 2, 3, 5, 8, 13])  # 0: a tie in arrival time


def iso_ms(ms: int) -> str:
    """Milliseconds after 2021-01-01T00:00:00Z -> '2021-01-01T00:01:05Z' or '...:05.250Z'."""
    text = ref.format_asa_datetime(BASE_US + ms * 1_000)  # 2021-01-01T00:01:05.2500000Z
    return text[:19] + ("Z" if ms % 1_000 == 0 else text[19:23] + "Z")


def event_log(draw, count: int, fields: Callable[[], dict]) -> list[dict]:
    """`count` records in arrival order (inside an @st.composite strategy, `draw` its own):
    seq, the fields `fields()` draws for each, its EventTime and EventEnqueuedUtcTime."""
    records, arrival_ms = [], 60 * SECOND_MS
    for seq in range(count):
        arrival_ms += draw(ARRIVAL_STEPS_S) * SECOND_MS
        records.append({"seq": seq, **fields(), "EventTime": iso_ms(arrival_ms + draw(OFFSETS_MS)),
                        "EventEnqueuedUtcTime": iso_ms(arrival_ms)})
    return records


def device_fields(draw, devices: int, partitions: int, roaming: bool, values=None):
    """Fields of a device's record: deviceId, its PartitionId (a device keeps one partition
    unless `roaming`), and a `value` drawn from `values` when given."""
    partition_of = [draw(st.integers(0, partitions - 1)) for _ in range(devices)]

    def fields() -> dict:
        device = draw(st.integers(0, devices - 1))
        out = {"deviceId": f"device{device + 1}",
               "PartitionId": draw(st.integers(0, partitions - 1)) if roaming
               else partition_of[device]}
        if values is not None:
            out["value"] = draw(values)
        return out

    return fields


class OneInputLog:
    """What a scenario over one input's log has in common (a mixin of its dataclass, which
    has `records`, `file_sizes`, `late_s`, `ooo_s` and `action`): its files and its case.toml."""

    early = "60s"  # the early-arrival tolerance

    def files(self) -> list[tuple[str, list[dict]]]:
        """(name, records) per input file; name order is arrival order."""
        return split_files(self.records, self.file_sizes)

    def case_toml(self, max_files_per_trigger: int | None) -> str:
        return case_toml(f"tests/property/{type(self).__module__}.py", late_s=self.late_s,
                         ooo_s=self.ooo_s, action=self.action, early=self.early,
                         max_files_per_trigger=max_files_per_trigger)
