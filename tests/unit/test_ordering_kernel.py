"""The vectorised policy kernel of the Spark operator against the plain-loop reference, over
random event sequences split into random micro-batches (state carried between them)."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

import reference_policy as ref
from asaql.plan.policy import EventOrderingPolicy
from asaql.spark import columns as C
from asaql.spark.ordering import _NONE, assign_system_timestamps

S = 1_000_000


@st.composite
def sequences(draw):
    n = draw(st.integers(1, 40))
    arrivals = sorted(draw(st.lists(st.integers(0, 120), min_size=n, max_size=n)))
    events = [a + draw(st.integers(-40, 400)) for a in arrivals]
    cuts = sorted(draw(st.sets(st.integers(1, max(1, n - 1)), max_size=4))) if n > 1 else []
    policy = EventOrderingPolicy(
        late_us=draw(st.integers(0, 20)) * S, ooo_us=draw(st.integers(0, 10)) * S,
        early_us=draw(st.sampled_from([None, 60 * S, 300 * S])),
        action=draw(st.sampled_from(["adjust", "drop"])))
    return [e * S for e in events], [a * S for a in arrivals], cuts, policy


@settings(max_examples=500, deadline=None)
@given(sequences())
def test_kernel_matches_the_reference_across_batches(sequence):
    events, arrivals, cuts, policy = sequence
    expected = ref.apply_policy(
        [ref.Event((0,), e, a, "f", i, {}) for i, (e, a) in enumerate(zip(events, arrivals))],
        late_us=policy.late_us, ooo_us=policy.ooo_us, early_us=policy.early_us,
        action=policy.action)
    running, stamps, flags = _NONE, [], []
    for start, end in zip([0, *cuts], [*cuts, len(events)]):
        s, f, running = assign_system_timestamps(
            np.array(events[start:end], dtype=np.int64), np.array(arrivals[start:end], dtype=np.int64),
            running, policy)
        stamps.extend(s.tolist())
        flags.extend(f.tolist())
    for outcome, stamp, flag in zip(expected, stamps, flags):
        assert (stamp if stamp != _NONE else None) == outcome.system_timestamp_us
        assert bool(flag & C.EARLY) == outcome.early
        assert bool(flag & C.LATE) == outcome.late
        assert bool(flag & C.OUT_OF_ORDER) == outcome.out_of_order
        assert bool(flag & C.DROPPED) == outcome.dropped
