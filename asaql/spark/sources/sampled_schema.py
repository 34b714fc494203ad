"""A large input's schema from a sample of its lines, and how the run learns the sample was not
enough. The schema of a run's JSON-lines files is the one Spark's inference gives over every
line: a job over the whole input (1.3-1.5 s of a cold run on 1,000,000 events). When the run
reads its input in one micro-batch, the schema of each file's first and last lines is taken
instead (jvm_inference.inferred_from_sample) and that micro-batch checks every event against it
on its own pass (JsonRecord's `fits`): an event that would have changed the schema (a field or
a type the sample did not have), and any line the sample's reading cannot vouch for (a key
twice, text after the object, an array of events), is set aside with the reason SAMPLE_MISSED;
a line whose JSON breaks off inside its object is not (Spark's inference takes nothing from
it). The writer finds it among the micro-batch's set-aside records before anything is
published and raises SampleMissed; the run then starts again on its checkpoint with the schema
of every line (execute.py). So the rows are those of the whole input's schema either way; an
input whose sample misses costs a second pass."""

from __future__ import annotations

import re

SAMPLE_MISSED = "asaql: an event beyond the schema of the input's sample"
_RAISED = re.compile(r"asaql\.spark\.[\w.]*SampleMissed")


class SampleMissed(RuntimeError):
    """A micro-batch found an event the sample's schema does not cover (nothing published)."""


def missed(reasons) -> bool:
    """Whether one of a micro-batch's set-aside records' reasons is SAMPLE_MISSED."""
    return any(reason == SAMPLE_MISSED for reason in reasons)


def raised_by_sample(error: BaseException) -> bool:
    """Whether a run failed because its sample's schema missed an event: Spark's message
    carries the writer's SampleMissed."""
    return isinstance(error, SampleMissed) or bool(_RAISED.search(str(error)))
