"""MATCH_RECOGNIZE's matcher (asaql/runtime/pattern_match.py) against a plain reference: with
DEFINEs that read only the current row, each row is one letter and the match of the attempt
starting at row S is the longest run S..E within LIMIT DURATION that Python's `re` fully
matches with the pattern written as a regular expression."""

from __future__ import annotations

import random
import re

import pytest

from asaql.core.match_pattern import Aggregate, Classifier, Lit, MatchPattern, Op, Read
from asaql.runtime.pattern_match import PartitionState, feed, prepare

INFINITY = 2**62
LETTERS = "abc"


def _regex(node) -> str:
    kind = node[0]
    if kind == "var":
        return node[1] if node[1] in LETTERS else "."  # d: a variable without DEFINE
    if kind == "any":
        return "."
    if kind == "seq":
        return "".join(_regex(item) for item in node[1])
    if kind == "alt":
        return "(?:" + "|".join(_regex(option) for option in node[1]) + ")"
    return "(?:" + _regex(node[2]) + ")" + node[1]


def _random_pattern(rng: random.Random, depth: int = 0):
    roll = rng.random()
    if depth >= 2 or roll < 0.4:
        return ("any",) if rng.random() < 0.1 else ("var", rng.choice("abcd"))
    if roll < 0.6:
        return ("rep", rng.choice("*+?"), _random_pattern(rng, depth + 1))
    if roll < 0.8:
        return ("alt", tuple(_random_pattern(rng, depth + 1) for _ in range(rng.randint(2, 3))))
    return ("seq", tuple(_random_pattern(rng, depth + 1) for _ in range(rng.randint(2, 3))))


def _spec(pattern, duration=10, measures=None) -> MatchPattern:
    # field 0: the row's letter; A AS A.v = 'a' (D has no DEFINE: any row)
    defines = tuple((k, Op("=", (Read(0), Lit(k)))) for k in LETTERS)
    measures = measures or (("n", Aggregate("count", None, None)),
                            ("first", Aggregate("first", None, 1)),
                            ("last", Aggregate("last", None, 1)))
    return MatchPattern(duration, pattern, tuple((k, k.upper()) for k in "abcd"), defines,
                        measures, ("letter", "position"))


def _reference(pattern, letters: str, ts: list[int], duration: int) -> list[tuple]:
    regex = re.compile(_regex(pattern))
    out = []
    for s in range(len(letters)):
        ends = [e for e in range(s, len(letters))
                if ts[e] - ts[s] < duration and regex.fullmatch(letters[s:e + 1])]
        if ends:
            e = max(ends)
            out.append((ts[s], ts[e], e - s + 1, s, e))
    return out


def _run(spec: MatchPattern, rows: list[tuple], cuts: list[int]) -> list[tuple]:
    """Feeds the rows in chunks (cut before each index of `cuts`), the watermark each time the
    next chunk's first System.Timestamp, then the end of the input."""
    compiled, state, out = prepare(spec), PartitionState(), []
    bounds = [0, *cuts, len(rows)]
    for begin, end in zip(bounds, bounds[1:]):
        watermark = rows[end][0] if end < len(rows) else INFINITY
        out.extend(feed(compiled, state, rows[begin:end], watermark))
    return [(m.start_ts, m.end_ts, *m.values) for m in out]


@pytest.mark.parametrize("seed", range(150))
def test_random_patterns_against_re(seed):
    rng = random.Random(seed)
    pattern = _random_pattern(rng)
    n = rng.randint(0, 14)
    letters = "".join(rng.choice(LETTERS) for _ in range(n))
    ts = sorted(rng.randint(0, 20) for _ in range(n))
    duration = rng.choice([3, 6, 100])
    rows = [(t, (letter, i)) for i, (t, letter) in enumerate(zip(ts, letters))]
    expected = [(ts_s, ts_e, count, s, e) for ts_s, ts_e, count, s, e in
                _reference(pattern, letters, ts, duration)]
    # cuts only where the System.Timestamp changes: the watermark is the next chunk's first
    places = [i for i in range(1, n) if ts[i] != ts[i - 1]]
    cuts = sorted(rng.sample(places, rng.randint(0, len(places))))
    for chosen in ([], cuts):
        got = _run(_spec(pattern, duration), rows, chosen)
        assert sorted(got) == sorted(expected), (pattern, letters, ts, duration, chosen)


def test_documented_toll_booth_pattern_overlaps_after_skip_to_next_row():
    pattern = ("seq", (("rep", "+", ("var", "a")), ("rep", "*", ("var", "b")),
                       ("rep", "+", ("var", "c"))))
    rows = [(t, (letter, t)) for t, letter in enumerate("aabcxac")]
    got = _run(_spec(pattern, duration=100), rows, [])
    # starts at rows 0 and 1 (overlapping), and 5
    assert [(m[0], m[1], m[2]) for m in got] == [(0, 3, 4), (1, 3, 3), (5, 6, 2)]


def test_limit_duration_cuts_a_match_and_the_watermark_closes_it():
    pattern = ("rep", "+", ("var", "a"))
    rows = [(0, ("a", 0)), (5, ("a", 1)), (10, ("a", 2))]
    # 10 − 0 is not within a duration of 10: the first attempt ends at ts 5
    assert [(m[0], m[1]) for m in _run(_spec(pattern, duration=10), rows, [])] == \
        [(0, 5), (5, 10), (10, 10)]
    compiled, state = prepare(_spec(pattern, duration=10)), PartitionState()
    assert feed(compiled, state, rows[:2], watermark=9) == []  # could still grow
    closed = feed(compiled, state, [], watermark=10)  # no later event can join the first
    assert [(m.start_ts, m.end_ts) for m in closed] == [(0, 5)]


def test_define_reads_running_aggregates_counting_the_row_itself():
    # PATTERN (Normal+ Dangerous+), Dangerous AS Max(Dangerous.pressure) > 2 * Max(Normal.pressure)
    normal = Op("=", (Read(0), Lit(1)))
    dangerous = Op(">", (Aggregate("max", "d", 1), Op("*", (Lit(2), Aggregate("max", "n", 1)))))
    spec = MatchPattern(100, ("seq", (("rep", "+", ("var", "n")), ("rep", "+", ("var", "d")))),
                        (("n", "Normal"), ("d", "Dangerous")), (("n", normal), ("d", dangerous)),
                        (("pressure", Aggregate("max", "d", 1)), ("patterns", Classifier())),
                        ("isFilling", "pressure"))
    rows = [(0, (1, 10)), (1, (1, 12)), (2, (0, 30)), (3, (0, 20)), (4, (1, 5))]
    got = _run(spec, rows, [])
    # from row 0: Normal Normal, then 30 > 24; the running max stays 30 > 24 for rows 3 and 4
    # (the DEFINE does not read isFilling). Row 4 alone is Normal with nothing after it.
    assert got == [(0, 4, 30, "Dangerous"), (1, 4, 30, "Dangerous")]
    rows[3] = (3, (0, 23))  # 30 is the running max: still dangerous; a lower first one is not
    rows[2] = (2, (0, 24))
    assert _run(spec, rows, []) == []


def test_greedy_alternation_prefers_the_first_option_among_equally_long_mappings():
    # (A | D)+ where D has no DEFINE: 'a' rows may be either; the first option wins
    pattern = ("rep", "+", ("alt", (("var", "a"), ("var", "d"))))
    rows = [(0, ("a", 0)), (1, ("b", 1))]
    got = _run(_spec(pattern, measures=(("c", Classifier()),)), rows, [])
    assert got == [(0, 1, "D"), (1, 1, "D")]
    got = _run(_spec(("seq", (("var", "d"), ("rep", "?", ("var", "a")))),
                     measures=(("c", Classifier()),)), [(0, ("b", 0)), (1, ("a", 1))], [])
    assert got[0] == (0, 1, "A")


# ---------------------------------------------------------------- DEFINEs over running aggregates
# The reference tries every way to map each run of rows to the variables (depth-first, a row
# mapped only where its DEFINE holds over the rows mapped before it, itself included), and takes
# the longest run that a mapping spells as the pattern: the matcher, which merges equivalent
# mappings, must find the same runs.
def _conditions(rng: random.Random) -> dict:
    """variable → (its matcher expression, the same condition in Python over the mapping)."""
    def for_variable(me: str, other: str):
        choice = rng.randrange(4)
        if choice == 0:  # the current row's value above the other variable's maximum so far
            return (Op(">", (Read(0), Aggregate("max", other, 0))),
                    lambda row, mapped: (lambda m: m is not None and row[0] > m)(
                        max((r[0] for v, r in mapped if v == other), default=None)))
        if choice == 1:  # my running sum, this row included, stays below 10
            return (Op("<", (Aggregate("sum", me, 0), Lit(10))),
                    lambda row, mapped: sum(r[0] for v, r in mapped if v == me) + row[0] < 10)
        if choice == 2:  # the row's letter
            return (Op("=", (Read(1), Lit(me))), lambda row, mapped: row[1] == me)
        return None  # no DEFINE: any row

    out = {}
    for me, other in (("a", "b"), ("b", "a")):
        made = for_variable(me, other)
        if made is not None:
            out[me] = made
    return out


def _brute_force(pattern, conditions: dict, rows: list[tuple], duration: int) -> list[tuple]:
    regex = re.compile(_regex_any(pattern))
    out = []
    for s in range(len(rows)):
        best = -1

        def walk(k: int, mapped: list, spelled: str):
            nonlocal best
            if k > s and regex.fullmatch(spelled):
                best = max(best, k - 1)
            if k == len(rows) or rows[k][0] - rows[s][0] >= duration:
                return
            ts, row = rows[k]
            for variable in ("a", "b", "z"):
                condition = conditions.get(variable)
                if condition is None or condition[1](row, mapped):
                    walk(k + 1, mapped + [(variable, row)], spelled + variable)

        walk(s, [], "")
        if best >= 0:
            out.append((rows[s][0], rows[best][0], best - s + 1))
    return out


def _regex_any(node) -> str:
    kind = node[0]
    if kind == "var":
        return node[1]
    if kind == "any":
        return "z"
    if kind == "seq":
        return "".join(_regex_any(item) for item in node[1])
    if kind == "alt":
        return "(?:" + "|".join(_regex_any(option) for option in node[1]) + ")"
    return "(?:" + _regex_any(node[2]) + ")" + node[1]


def _small_pattern(rng: random.Random, depth: int = 0):
    roll = rng.random()
    if depth >= 2 or roll < 0.45:
        return ("any",) if rng.random() < 0.15 else ("var", rng.choice("ab"))
    if roll < 0.7:
        return ("rep", rng.choice("*+?"), _small_pattern(rng, depth + 1))
    if roll < 0.85:
        return ("alt", (_small_pattern(rng, depth + 1), _small_pattern(rng, depth + 1)))
    return ("seq", (_small_pattern(rng, depth + 1), _small_pattern(rng, depth + 1)))


@pytest.mark.parametrize("seed", range(60))
def test_defines_over_running_aggregates_against_every_mapping(seed):
    rng = random.Random(f"aggregates:{seed}")
    pattern = _small_pattern(rng)
    conditions = _conditions(rng)
    n = rng.randint(1, 7)
    ts = sorted(rng.randint(0, 12) for _ in range(n))
    rows = [(t, (rng.randint(0, 6), rng.choice("ab"))) for t in ts]
    duration = rng.choice([4, 100])
    spec = MatchPattern(duration, pattern, (("a", "A"), ("b", "B")),
                        tuple((v, c[0]) for v, c in conditions.items()),
                        (("n", Aggregate("count", None, None)),), ("value", "letter"))
    expected = _brute_force(pattern, conditions, rows, duration)
    places = [i for i in range(1, n) if ts[i] != ts[i - 1]]
    cuts = sorted(rng.sample(places, rng.randint(0, len(places))))
    for chosen in ([], cuts):
        assert sorted(_run(spec, rows, chosen)) == sorted(expected), (pattern, rows, chosen)
