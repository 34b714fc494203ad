"""ASA's geofencing statement (a reference join tested per row by ST_WITHIN) alone takes the
native step; it gives the golden case's rows there and on the general step."""

from __future__ import annotations

import tempfile
from pathlib import Path

from asaql.compiler.pipeline import compile_query
from asaql.plan.step_path import step_paths
from asaql.run.runner import RunOptions, run
from asaql.testing.golden import canonical, load_case, read_rows

CASE = Path(__file__).parent.parent / "golden" / "cases" / "doc_geofencing"
QUERY = """
SELECT DeviceStreamInput.DeviceID, SiteReferenceInput.SiteID, SiteReferenceInput.SiteName
INTO Output
FROM DeviceStreamInput TIMESTAMP BY Time
JOIN SiteReferenceInput
ON st_within(DeviceStreamInput.GeoPosition, SiteReferenceInput.Geofence) = 0
WHERE DeviceStreamInput.DeviceID = SiteReferenceInput.AllowedDeviceID
"""


def _run(case, compiled, step: str, tmp: Path) -> list[str]:
    output = tmp / f"{step}.jsonl"
    events = str(next(iter(case.inputs.values())))  # the case's one input file
    references = {"SiteReferenceInput": str(case.references["SiteReferenceInput"])}
    run(compiled, RunOptions(inputs={"DeviceStreamInput": events}, outputs={"Output": str(output)},
                             step=step, checkpoint=str(tmp / f"checkpoint-{step}"),
                             references=references))
    return canonical(read_rows(output), ordered=False)


def test_geofencing_gives_the_documented_rows_on_the_native_and_general_steps(spark):
    case = load_case(CASE)
    compiled = compile_query(QUERY, case.policy(), ("SiteReferenceInput",))
    assert any("native" in path for path in step_paths(compiled.plan).values())
    expected = canonical(read_rows(case.expected["Output"]), ordered=False)
    with tempfile.TemporaryDirectory() as tmp:
        assert _run(case, compiled, "native", Path(tmp)) == expected
        assert _run(case, compiled, "general", Path(tmp)) == expected
