"""The geofencing golden case (a reference join tested per row by ST_WITHIN, and a window over
it) gives the same rows on the general step as on the default path, micro-batch by file."""

from __future__ import annotations

import tempfile
from pathlib import Path

from asaql.compiler import compile_query
from asaql.runner import RunOptions, run
from asaql.testing.golden import canonical, load_case, read_rows

CASE = Path(__file__).parent.parent / "golden" / "cases" / "doc_geofencing"


def _run(case, step: str, tmp: Path) -> dict[str, list[str]]:
    compiled = compile_query(case.query, case.policy(), tuple(case.references))
    outputs = {name: str(tmp / f"{step}-{name}.jsonl") for name in compiled.output_names}
    events = str(next(iter(case.inputs.values())))  # the case's one input file
    run(compiled, RunOptions(inputs={compiled.input_names[0]: events}, outputs=outputs, step=step,
                             checkpoint=str(tmp / f"checkpoint-{step}"),
                             references={k: str(v) for k, v in case.references.items()}))
    return {name: canonical(read_rows(Path(path)), ordered=False) for name, path in outputs.items()}


def test_geofencing_is_the_same_on_the_general_and_native_steps(spark):
    case = load_case(CASE)
    with tempfile.TemporaryDirectory() as tmp:
        general = _run(case, "general", Path(tmp))
        native = _run(case, "native", Path(tmp))
    assert general == native
    expected = {alias or "Output": canonical(read_rows(path), ordered=False)
                for alias, path in case.expected.items()}
    assert {k.lower(): v for k, v in general.items()} == \
        {k.lower(): v for k, v in expected.items()}
