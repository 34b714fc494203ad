"""What the native step keeps between micro-batches (one JSON file per micro-batch)."""

from __future__ import annotations

import json
import shutil
from dataclasses import dataclass, field
from pathlib import Path

from asaql.outputs.formats import replace_file
from asaql.runtime import columns as C
from asaql.runtime.policy import NONE

KEEP_STATES = 3  # micro-batches of state kept behind the newest (a replay needs the one before)


@dataclass
class NativeState:
    """What the general step keeps per bucket, for all buckets: per key the largest accepted
    System.Timestamp and (last arrival, the bucket's clock then); per bucket its clock; per key
    (or '*') the watermark windows were closed with; the partial rows of open windows."""

    largest: dict = field(default_factory=dict)
    clocks: dict = field(default_factory=dict)
    bucket_clocks: dict = field(default_factory=dict)
    emitted: dict = field(default_factory=dict)
    buckets: dict = field(default_factory=dict)  # key → its bucket
    open_rows: int = 0
    # the input's partitions as the run's first pass found them ([partition, first arrival]),
    # when the step was not given them (StepSpec.partitions None)
    partitions: list | None = None

    def dump(self) -> str:
        return json.dumps({"largest": self.largest, "clocks": self.clocks,
                           "bucket_clocks": {str(b): c for b, c in self.bucket_clocks.items()},
                           "emitted": self.emitted, "buckets": self.buckets,
                           "open_rows": self.open_rows, "partitions": self.partitions})

    @classmethod
    def load(cls, text: str) -> "NativeState":
        data = json.loads(text)
        return cls(data["largest"], {k: tuple(v) for k, v in data["clocks"].items()},
                   {int(b): c for b, c in data["bucket_clocks"].items()}, data["emitted"],
                   data["buckets"], data["open_rows"], data.get("partitions"))


def load_state(folder: Path, batch_id: int) -> tuple[NativeState, int | None]:
    """The state after the newest micro-batch before `batch_id` (a replay of `batch_id`
    starts from there), and that micro-batch's id."""
    ids = sorted(batch_of(p) for p in folder.glob("state-*.json"))
    before = [i for i in ids if i < batch_id]
    if not before:
        return NativeState(), None
    return NativeState.load((folder / f"state-{before[-1]}.json").read_text()), before[-1]


def save_state(folder: Path, state: NativeState, batch_id: int) -> None:
    """`state` as micro-batch `batch_id`'s; the states and open windows older than
    KEEP_STATES micro-batches (or newer: an abandoned attempt's) go."""
    replace_file(folder / f"state-{batch_id}.json", state.dump().encode("utf-8"))
    for old in (*folder.glob("state-*.json"), *folder.glob("open-*")):
        number = batch_of(old)
        if number < batch_id - KEEP_STATES or number > batch_id:
            if old.is_dir():
                shutil.rmtree(old, ignore_errors=True)
            else:
                old.unlink()


def batch_of(path: Path) -> int:
    """The micro-batch of a state file or open-windows folder (state-B.json, open-B-S)."""
    return int(path.name.split(".")[0].split("-")[1])


def advance_state(state: NativeState, stats) -> tuple[bool, set]:
    """Applies a micro-batch's controls and arrivals (its statistics per bucket and key) as
    the general step does per bucket (ticks first, then the arrivals); → (the input ended,
    the buckets invoked)."""
    ended, invoked = False, set()
    ticks: dict[int, int] = {}
    for row in stats:
        invoked.add(row[C.BUCKET])
        ended = ended or bool(row["_ended"])
        if row["_tick"] is not None:
            ticks[row[C.BUCKET]] = max(ticks.get(row[C.BUCKET], NONE), row["_tick"])
    for bucket, value in ticks.items():
        advance_clock(state.bucket_clocks, bucket, value)
    arrivals = [r for r in stats if r["_last_arrival"] is not None]
    for row in arrivals:
        advance_clock(state.bucket_clocks, row[C.BUCKET], row["_last_arrival"])
    for row in arrivals:
        key, previous = row[C.KEY], state.clocks.get(row[C.KEY], (NONE, NONE))[0]
        state.clocks[key] = (max(previous, row["_last_arrival"]),
                             state.bucket_clocks[row[C.BUCKET]])
        top = NONE if row["_top"] is None else row["_top"]
        state.largest[key] = max(state.largest.get(key, NONE), top)
    # control records go to every bucket: a key's bucket is where its events went
    state.buckets.update({r[C.KEY]: r[C.BUCKET] for r in stats if r["_data"]})
    return ended, invoked


def advance_clock(clocks: dict, bucket: int, value: int) -> None:
    """A bucket's clock moves forward only."""
    clocks[bucket] = value if clocks.get(bucket) is None else max(clocks[bucket], value)
