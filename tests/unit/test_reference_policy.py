"""The reference policy (tests/reference_policy.py) against the ASA documents' worked examples,
plus invariants that hold for any input. No Spark."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

# tests/ is on sys.path through tests/conftest.py: the oracle lives there, not in asaql.
import make_expected_from_reference as mk
import reference_policy as ref
from reference_policy import Event, apply_policy, format_asa_datetime, parse_iso

TESTS = Path(__file__).resolve().parents[1]

SECOND = 1_000_000
MINUTE = 60 * SECOND
REPO = TESTS.parent


def at(clock: str) -> int:
    """'00:10:25' or '12:07' on 2021-01-01 (the cases' day) -> µs."""
    parts = clock.split(":") + ["00"] * (3 - len(clock.split(":")))
    return parse_iso("2021-01-01T{}:{}:{}Z".format(*parts))


def log(rows, key_of=lambda device: (0,)) -> list[Event]:
    """(event time, arrival time, deviceId) rows -> events of input.jsonl, in line order."""
    return [
        Event(key_of(device), at(event_time), at(arrival), "input.jsonl", line, {"deviceId": device})
        for line, (event_time, arrival, device) in enumerate(rows, start=1)
    ]


def timestamps(outcomes) -> list[str | None]:
    """System.Timestamps as 'hh:mm:ss' (None when dropped), in input order."""
    return [None if o.dropped else format_asa_datetime(o.system_timestamp_us)[11:19] for o in outcomes]


# ------------------------------------------------------------------------- datetimes


def test_format_asa_datetime_has_seven_digits_the_seventh_zero():
    assert format_asa_datetime(at("00:00:05")) == "2021-01-01T00:00:05.0000000Z"
    assert format_asa_datetime(at("00:00:05") + 123_456) == "2021-01-01T00:00:05.1234560Z"
    assert format_asa_datetime(0) == "1970-01-01T00:00:00.0000000Z"


@pytest.mark.parametrize(
    "text, expected_offset_us",
    [
        ("2021-01-01T00:00:05Z", 0),
        ("2021-01-01T00:00:05.250Z", 250_000),
        ("2021-01-01T00:00:05.1234567Z", 123_456),  # ASA's 100 ns digit is truncated
        ("2021-01-01T01:00:05+01:00", 0),
        ("2021-01-01T00:00:05", 0),  # no offset: UTC
    ],
)
def test_parse_iso(text, expected_offset_us):
    assert parse_iso(text) == 1_609_459_205_000_000 + expected_offset_us


@given(st.integers(min_value=0, max_value=4_102_444_800_000_000))  # 1970 .. 2100
def test_parse_iso_reads_back_format_asa_datetime(us):
    assert parse_iso(format_asa_datetime(us)) == us


# ------------------------------------------------------------------------- seed 003

SEED_003 = [  # (event time, arrival time, device) of the five-event table
    ("00:10:00", "00:10:40", "device1"),
    ("00:10:30", "00:10:41", "device1"),
    ("00:10:42", "00:10:42", "device1"),
    ("00:10:38", "00:10:43", "device1"),
    ("00:10:35", "00:10:45", "device1"),
]


def test_seed_003_adjust_gives_the_tables_system_timestamps():
    outcomes = apply_policy(log(SEED_003), late_us=15 * SECOND, ooo_us=5 * SECOND, early_us=5 * MINUTE,
                            action="adjust")
    assert timestamps(outcomes) == ["00:10:25", "00:10:30", "00:10:42", "00:10:38", "00:10:37"]
    assert [o.late for o in outcomes] == [True, False, False, False, False]
    assert [o.out_of_order for o in outcomes] == [False, False, False, False, True]


def test_seed_003_adjust_orders_as_the_document_says():
    outcomes = apply_policy(log(SEED_003), late_us=15 * SECOND, ooo_us=5 * SECOND, early_us=5 * MINUTE,
                            action="adjust")
    by_time = sorted(range(5), key=lambda i: outcomes[i].system_timestamp_us)
    assert [i + 1 for i in by_time] == [1, 2, 5, 4, 3]  # "The actual order is: 1, 2, 5, 4, 3"


def test_seed_003_drop_discards_events_1_and_5():
    outcomes = apply_policy(log(SEED_003), late_us=15 * SECOND, ooo_us=5 * SECOND, early_us=5 * MINUTE,
                            action="drop")
    assert timestamps(outcomes) == [None, "00:10:30", "00:10:42", "00:10:38", None]
    assert [o.late for o in outcomes] == [True, False, False, False, False]
    assert [o.out_of_order for o in outcomes] == [False, False, False, False, True]


# ------------------------------------------------------------------------- seed 001

SEED_001 = [
    ("00:00:00", "00:10:01", "device1"),
    ("00:00:01", "00:10:01", "device1"),
    ("00:10:00", "00:10:02", "device1"),
    ("00:09:00", "00:10:03", "device1"),
    ("00:06:00", "00:10:04", "device1"),
]


def test_seed_001_example_gives_the_documents_system_timestamps():
    outcomes = apply_policy(log(SEED_001), late_us=10 * MINUTE, ooo_us=3 * MINUTE, early_us=5 * MINUTE,
                            action="adjust")
    assert timestamps(outcomes) == ["00:00:01", "00:00:01", "00:10:00", "00:09:00", "00:07:00"]
    assert [o.late for o in outcomes] == [True, False, False, False, False]
    assert [o.out_of_order for o in outcomes] == [False, False, False, False, True]


# ------------------------------------------------------------------------- seed 000

SEED_000 = [
    ("12:07", "12:07", "device1"),
    ("12:08", "12:08", "device2"),
    ("12:17", "12:11", "device1"),
    ("12:08", "12:13", "device3"),
    ("12:19", "12:16", "device1"),
    ("12:12", "12:17", "device3"),
    ("12:17", "12:18", "device2"),
    ("12:20", "12:19", "device2"),
    ("12:16", "12:21", "device3"),
    ("12:23", "12:22", "device2"),
    ("12:22", "12:24", "device2"),
    ("12:21", "12:27", "device3"),
]
SEED_000_POLICY = dict(late_us=5 * MINUTE, ooo_us=2 * MINUTE, action="adjust")


def test_seed_000_illustration_with_early_policy():
    outcomes = apply_policy(log(SEED_000), early_us=5 * MINUTE, **SEED_000_POLICY)
    got = timestamps(outcomes)
    # What the document states: event 3 dropped as early; 6 -> 12:17; 12 late -> 12:22.
    assert outcomes[2].early and outcomes[2].dropped
    assert got[5] == "12:17:00" and outcomes[5].out_of_order
    assert got[11] == "12:22:00" and outcomes[11].late and not outcomes[11].out_of_order
    # The rest, derived by the rules (see tests/golden/cases/seed_000_illustration_early).
    assert got == ["12:07:00", "12:08:00", None, "12:08:00", "12:19:00", "12:17:00",
                   "12:17:00", "12:20:00", "12:18:00", "12:23:00", "12:22:00", "12:22:00"]


def test_seed_000_illustration_without_early_policy():
    outcomes = apply_policy(log(SEED_000), early_us=None, **SEED_000_POLICY)
    got = timestamps(outcomes)
    # What the document states: event 3 kept (watermark raised to 12:17 - 2 min = 12:15),
    # so event 4 is adjusted forward 7 minutes, 12:08 -> 12:15.
    assert got[2] == "12:17:00" and not outcomes[2].early
    assert got[3] == "12:15:00" and outcomes[3].out_of_order
    assert got == ["12:07:00", "12:08:00", "12:17:00", "12:15:00", "12:19:00", "12:17:00",
                   "12:17:00", "12:20:00", "12:18:00", "12:23:00", "12:22:00", "12:22:00"]


def test_seed_000_substreams_adjust_fewer_events():
    outcomes = apply_policy(log(SEED_000, key_of=lambda device: (device,)), early_us=5 * MINUTE,
                            **SEED_000_POLICY)
    assert timestamps(outcomes) == ["12:07:00", "12:08:00", None, "12:08:00", "12:19:00", "12:12:00",
                                    "12:17:00", "12:20:00", "12:16:00", "12:23:00", "12:22:00", "12:22:00"]
    adjusted = [i + 1 for i, o in enumerate(outcomes)
                if not o.dropped and o.system_timestamp_us != o.event.event_time_us]
    assert adjusted == [12]  # without OVER: 6, 9 and 12 ("fewer events with their times adjusted")


# ------------------------------------------------------------------------- edges and details


def test_bounds_are_strict():
    rows = [
        ("00:00:05", "00:00:10", "d"),  # exactly arrival - late: not late
        ("00:05:20", "00:00:20", "d"),  # exactly arrival + early: not early
        ("00:05:15", "00:00:21", "d"),  # exactly the running maximum - ooo: not out of order
    ]
    outcomes = apply_policy(log(rows), late_us=5 * SECOND, ooo_us=5 * SECOND, early_us=5 * MINUTE,
                            action="drop")
    assert [(o.early, o.late, o.out_of_order, o.dropped) for o in outcomes] == [(False,) * 4] * 3


def test_early_events_are_dropped_even_with_adjust_and_do_not_move_the_maximum():
    rows = [("00:10:00", "00:01:00", "d"), ("00:01:00", "00:01:01", "d")]
    outcomes = apply_policy(log(rows), late_us=5 * SECOND, ooo_us=0, early_us=5 * MINUTE, action="adjust")
    assert outcomes[0].early and outcomes[0].dropped and not outcomes[0].late
    assert timestamps(outcomes) == [None, "00:01:00"]


def test_events_are_taken_in_arrival_order_not_input_order():
    rows = [("00:01:00", "00:01:00", "d"), ("00:00:10", "00:00:59", "d")]
    outcomes = apply_policy(log(rows), late_us=5 * SECOND, ooo_us=0, early_us=None, action="adjust")
    # Arrival order: 00:00:10 first (late -> 00:00:54), then 00:01:00: nothing out of order.
    assert timestamps(outcomes) == ["00:01:00", "00:00:54"]
    assert not any(o.out_of_order for o in outcomes)


def test_a_late_event_adjusted_can_also_be_out_of_order():
    rows = [("00:01:00", "00:01:00", "d"), ("00:00:10", "00:01:01", "d")]
    outcomes = apply_policy(log(rows), late_us=5 * SECOND, ooo_us=2 * SECOND, early_us=None, action="adjust")
    # 00:00:10 -> 00:00:56 (late), then below 00:01:00 - 2 s -> 00:00:58.
    assert timestamps(outcomes) == ["00:01:00", "00:00:58"]
    assert outcomes[1].late and outcomes[1].out_of_order


def test_arrival_ties_follow_file_then_line():
    same = at("00:01:00")
    events = [
        Event((0,), at("00:00:40"), same, "b.jsonl", 1, {}),
        Event((0,), at("00:00:50"), same, "a.jsonl", 2, {}),
        Event((0,), at("00:00:45"), same, "a.jsonl", 1, {}),
    ]
    outcomes = apply_policy(events, late_us=MINUTE, ooo_us=0, early_us=None, action="adjust")
    # Order: a.jsonl:1 (00:45), a.jsonl:2 (00:50), b.jsonl:1 (00:40 -> 00:50).
    assert timestamps(outcomes) == ["00:00:50", "00:00:50", "00:00:45"]


def test_keys_do_not_see_each_other():
    events = [
        Event((0,), at("00:01:00"), at("00:01:00"), "f", 1, {}),
        Event((1,), at("00:00:30"), at("00:01:01"), "f", 2, {}),
    ]
    outcomes = apply_policy(events, late_us=MINUTE, ooo_us=0, early_us=None, action="drop")
    assert timestamps(outcomes) == ["00:01:00", "00:00:30"]


def test_unknown_action_is_refused():
    with pytest.raises(ValueError):
        apply_policy([], late_us=0, ooo_us=0, early_us=None, action="ignore")


# ------------------------------------------------------------------------- golden files


CROSS_CHECKED = [
    *(REPO / "tests/golden/cases" / name for name in (
        "seed_003_adjust", "seed_003_drop", "seed_001_example", "seed_000_illustration_early",
        "seed_000_illustration_no_early", "seed_000_substreams_over_device",
        "edge_exact_late_and_early_bounds", "edge_exact_out_of_order_bound",
        "edge_policy_per_partition", "edge_arrival_ties_line_order")),
    REPO / "samples/iot_devices",
]


@pytest.mark.parametrize("case_dir", CROSS_CHECKED, ids=lambda p: p.name)
def test_golden_expected_files_agree_with_the_reference(case_dir):
    """The seed cases were transcribed from the documents by hand; the others were written by the
    reference. Either way the file must be exactly what the rules give."""
    expected = (case_dir / "expected.jsonl").read_text(encoding="utf-8")
    assert mk.to_jsonl(mk.expected_rows(case_dir)) == expected


# ------------------------------------------------------------------------- invariants


@st.composite
def event_logs(draw):
    """Up to 30 events over 3 keys and two files, arrival within two minutes, event time from a
    minute before to seven minutes after arrival; whole seconds, so bounds are often hit exactly."""
    events = []
    for line in range(1, draw(st.integers(0, 30)) + 1):
        arrival = draw(st.integers(0, 120)) * SECOND
        event_time = arrival + draw(st.integers(-60, 420)) * SECOND
        key = (draw(st.integers(0, 2)),)
        events.append(Event(key, event_time, arrival, draw(st.sampled_from(["a", "b"])), line, {"seq": line}))
    return events


policies = st.fixed_dictionaries({
    "late_us": st.integers(0, 60).map(lambda s: s * SECOND),
    "ooo_us": st.integers(0, 60).map(lambda s: s * SECOND),
    "early_us": st.one_of(st.none(), st.integers(0, 400).map(lambda s: s * SECOND)),
    "action": st.sampled_from(["adjust", "drop"]),
})


def in_arrival_order_per_key(outcomes):
    keys = {}
    for outcome in sorted(outcomes, key=lambda o: ref.arrival_order(o.event)):
        keys.setdefault(outcome.event.key, []).append(outcome)
    return keys.values()


@settings(max_examples=300)
@given(event_logs(), policies)
def test_every_event_has_one_outcome_kept_or_dropped(events, policy):
    outcomes = apply_policy(events, **policy)
    assert [o.event for o in outcomes] == events  # input order, kept + dropped = input
    for o in outcomes:
        assert o.dropped == (o.system_timestamp_us is None)
        assert o.early == (policy["early_us"] is not None
                           and o.event.event_time_us > o.event.arrival_us + policy["early_us"])
        if o.early:
            assert o.dropped and not o.late and not o.out_of_order
        if policy["action"] == "adjust":
            assert o.dropped == o.early


@settings(max_examples=300)
@given(event_logs(), policies)
def test_accepted_timestamps_respect_both_tolerances(events, policy):
    late, ooo, early = policy["late_us"], policy["ooo_us"], policy["early_us"]
    for stream in in_arrival_order_per_key(apply_policy(events, **policy)):
        running_max = None
        for o in stream:
            if o.dropped:
                continue
            ts, event_time, arrival = o.system_timestamp_us, o.event.event_time_us, o.event.arrival_us
            assert ts >= arrival - late
            if running_max is not None:
                assert ts >= running_max - ooo
            if early is not None:
                assert ts <= arrival + early  # accepted events are never in the future
            if policy["action"] == "drop":
                assert ts == event_time
            else:
                # Adjusting only moves time forward, and no further than the binding bound.
                # (Not "ts <= max(event time, arrival - late)": an out-of-order adjustment can go
                # above both, e.g. 00:10 then 00:05 with ooo 0 gives 00:10.)
                bound = max(event_time, arrival - late)
                if running_max is not None:
                    bound = max(bound, running_max - ooo)
                assert ts == bound
                if not o.out_of_order:
                    assert ts == max(event_time, arrival - late)
            running_max = ts if running_max is None else max(running_max, ts)


@given(event_logs(), policies)
def test_with_no_out_of_order_tolerance_adjusted_timestamps_never_go_back(events, policy):
    policy = {**policy, "ooo_us": 0, "action": "adjust"}
    for stream in in_arrival_order_per_key(apply_policy(events, **policy)):
        kept = [o.system_timestamp_us for o in stream if not o.dropped]
        assert kept == sorted(kept)


@given(event_logs(), policies, st.randoms(use_true_random=False))
def test_outcomes_depend_on_arrival_order_not_on_input_order(events, policy, random):
    shuffled = events[:]
    random.shuffle(shuffled)
    by_line = {o.event.line: o for o in apply_policy(shuffled, **policy)}
    assert [by_line[e.line] for e in events] == apply_policy(events, **policy)


@given(event_logs(), policies)
def test_each_key_is_decided_on_its_own(events, policy):
    whole = apply_policy(events, **policy)
    for key in {e.key for e in events}:
        alone = apply_policy([e for e in events if e.key == key], **policy)
        assert alone == [o for o in whole if o.event.key == key]
