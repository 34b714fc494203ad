"""ASA's job configuration (JobConfig.json of an ASA project): the event-ordering settings.

ASA names them EventsLateArrivalMaxDelayInSeconds, EventsOutOfOrderMaxDelayInSeconds and
EventsOutOfOrderPolicy ("Adjust" or "Drop"); asaql reads those three and leaves the rest (data
locale, streaming units, error policy…) to ASA.
"""

from __future__ import annotations

import json
from pathlib import Path

from asaql.errors import ConfigurationError

LATE = "EventsLateArrivalMaxDelayInSeconds"
OUT_OF_ORDER = "EventsOutOfOrderMaxDelayInSeconds"
POLICY = "EventsOutOfOrderPolicy"


def policy_options(path: str) -> dict[str, str]:
    """→ the `late`, `ooo` and `action` options a job configuration gives (only those it has)."""
    try:
        config = json.loads(Path(path).read_text(encoding="utf-8-sig"))
    except OSError as error:
        raise ConfigurationError(f"cannot read job configuration {path}: {error.strerror}")
    except ValueError as error:
        raise ConfigurationError(f"job configuration {path} is not JSON: {error}")
    if not isinstance(config, dict):
        raise ConfigurationError(f"job configuration {path} is not a JSON object")
    options = {}
    for key, option in ((LATE, "late"), (OUT_OF_ORDER, "ooo")):
        if config.get(key) is not None:
            value = config[key]
            if isinstance(value, bool) or not isinstance(value, (int, float)) or value < 0:
                raise ConfigurationError(f"{path}: {key} must be a number of seconds ≥ 0, "
                                         f"not {value!r}")
            options[option] = f"{int(value * 1000)}ms" if value != int(value) else f"{int(value)}s"
    if config.get(POLICY) is not None:
        action = str(config[POLICY]).lower()
        if action not in ("adjust", "drop"):
            raise ConfigurationError(f"{path}: {POLICY} is Adjust or Drop, not {config[POLICY]!r}")
        options["action"] = action
    return options
