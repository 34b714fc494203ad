"""Stage names: the analysis names the internal streams it cuts a statement into
(asaql/analysis/stages.py); the plan and the Spark backend tell them from outputs and inputs."""

from __future__ import annotations

STAGE_MARK = "#"  # stage names start with it: no input or output of a query can


def is_stage(name: str) -> bool:
    return name.startswith(STAGE_MARK)


def stage_name(label: str) -> str:
    return STAGE_MARK + label
