"""The one pass's check (asaql/spark/operators/arrival_segments.py, `fits`): a pass that started
each file of a key from the key's largest of earlier micro-batches gave every row the outcome
the micro-batch's own seeds give, or it says no."""

from __future__ import annotations

from asaql.runtime import columns as C
from asaql.spark.operators.arrival_segments import ANY_FILE, carried_seeds, fits, seeds_of

OOO = 5


def segment(file, key, a0, a1, top, tolerance, task=0, broken=0):
    return {C.FILE: file, C.KEY: key, "_a0": a0, "_p0": 1, "_a1": a1, "_p1": 9, "_top": top,
            "_task0": task, "_task1": task, "_broken": broken, "_tolerance": tolerance}


def test_carried_seeds_name_every_file_and_skip_unknown_keys():
    assert carried_seeds({"0": 7, "1": None}) == {ANY_FILE: {"0": 7}}


def test_one_segment_per_key_always_fits():
    found = [segment("f1", "0", 10, 12, 100, 3), segment("f1", "1", 10, 12, 50, 1)]
    assert fits(found, {"0": 120}, OOO)
    assert fits(found, {}, OOO)


def test_a_later_segment_fits_while_its_rows_tolerate_the_earlier_ones_largest():
    # f2's rows tolerate a seed up to 100: their times are within the tolerance of f1's top
    assert fits([segment("f1", "0", 10, 12, 100, 80), segment("f2", "0", 20, 22, 130, 100)],
                {}, OOO)
    # one of f2's rows is more than 5 below f1's 100 before any row of f2 passed it
    assert not fits([segment("f1", "0", 10, 12, 100, 80), segment("f2", "0", 20, 22, 130, 96)],
                    {}, OOO)


def test_a_carried_largest_above_the_earlier_segments_changes_nothing():
    found = [segment("f1", "0", 10, 12, 100, 80), segment("f2", "0", 20, 22, 130, 90)]
    assert not fits(found, {}, OOO)
    assert fits(found, {"0": 100}, OOO)  # f2's rows were already held against 100


def test_segments_out_of_order_split_or_overlapping_do_not_fit():
    assert not fits([segment("f1", "0", 10, 12, 100, 200, broken=1)], {}, OOO)
    assert not fits([{**segment("f1", "0", 10, 12, 100, 200), "_task1": 1}], {}, OOO)
    overlapping = [segment("f1", "0", 10, 25, 100, 200), segment("f2", "0", 20, 30, 90, 200)]
    assert seeds_of(overlapping, {}) is None and not fits(overlapping, {}, OOO)
