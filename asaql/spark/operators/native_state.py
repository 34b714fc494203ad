"""What the native step keeps between micro-batches (one JSON file per micro-batch)."""

from __future__ import annotations

import json
from dataclasses import dataclass, field


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

    def dump(self) -> str:
        return json.dumps({"largest": self.largest, "clocks": self.clocks,
                           "bucket_clocks": {str(b): c for b, c in self.bucket_clocks.items()},
                           "emitted": self.emitted, "buckets": self.buckets,
                           "open_rows": self.open_rows})

    @classmethod
    def load(cls, text: str) -> "NativeState":
        data = json.loads(text)
        return cls(data["largest"], {k: tuple(v) for k, v in data["clocks"].items()},
                   {int(b): c for b, c in data["bucket_clocks"].items()}, data["emitted"],
                   data["buckets"], data["open_rows"])


def advance_clock(clocks: dict, bucket: int, value: int) -> None:
    """A bucket's clock moves forward only."""
    clocks[bucket] = value if clocks.get(bucket) is None else max(clocks[bucket], value)
