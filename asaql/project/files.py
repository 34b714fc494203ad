"""The files of a VS Code Azure Stream Analytics project, read as the extension writes them:
`asaproj.json` (`startFile`: the query; `configurations`: `filePath` and `subType` of each
configuration file), the job configuration, `Inputs/*.json` and `Outputs/*.json` (each says
what it is in `ScriptType`: Input, InputMock (a local stand-in, `Inputs/local_*.json`) or
Output). Files the project lists and files in Inputs/ and Outputs/ are both read: newer projects
list only some. Functions/ is read by asaql/javascript/definitions.py. No pyspark."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

from asaql.errors import ConfigurationError

PROJECT_FILE = "asaproj.json"


class ProjectError(ConfigurationError):
    """A project file that cannot be read or mapped: one line naming the file and the field."""


@dataclass(frozen=True)
class ConfigFile:
    path: Path  # as the message shows it (the project folder joined with the file's path)
    data: dict = field(repr=False)

    def get(self, *keys: str):
        """The value at `keys` (names matched case-insensitively), None when absent."""
        value = self.data
        for key in keys:
            if not isinstance(value, dict):
                return None
            value = next((v for k, v in value.items() if k.lower() == key.lower()), None)
        return value

    def fail(self, field_name: str, problem: str) -> ProjectError:
        return ProjectError(f"{self.path}: {field_name} {problem}")


@dataclass(frozen=True)
class Project:
    folder: Path
    query: Path
    job_config: Path | None
    inputs: dict[str, ConfigFile]   # alias → its Input file
    mocks: dict[str, ConfigFile]    # alias → its InputMock file (a local stand-in)
    outputs: dict[str, ConfigFile]  # alias → its Output file

    @property
    def reference_aliases(self) -> tuple[str, ...]:
        return tuple(alias for alias, file in self.inputs.items()
                     if str(file.get("Type") or "").lower().startswith("reference"))


def is_project(path: str) -> bool:
    return Path(path).is_dir()


def read_project(folder: str) -> Project:
    root = Path(folder)
    manifest = root / PROJECT_FILE
    if not manifest.is_file():
        hint = (" (a Visual Studio .asaproj project: open it in VS Code's ASA extension to get "
                "the JSON form)" if any(root.glob("*.asaproj")) else "")
        raise ProjectError(f"{root}: no {PROJECT_FILE}: an ASA project folder (VS Code) has one"
                           + hint)
    project = _read_json(manifest)
    start = project.get("startFile")
    if not isinstance(start, str) or not start.strip():
        raise project.fail("startFile", "is missing: it names the query file (NAME.asaql)")
    query = root / _local_path(start)
    if not query.is_file():
        raise project.fail("startFile", f"names {start}, which is not in the project")
    listed = project.get("configurations") or []
    if not isinstance(listed, list):
        raise project.fail("configurations", "is not a list")
    by_kind: dict[str, list[Path]] = {}
    for number, entry in enumerate(listed):
        path = entry.get("filePath") if isinstance(entry, dict) else None
        if not isinstance(path, str):
            raise project.fail(f"configurations[{number}].filePath", "is missing")
        by_kind.setdefault(str(entry.get("subType", "")).lower(), []).append(
            root / _local_path(path))
    job_config = next(iter(by_kind.get("jobconfig", [])), None)
    if job_config is None and (root / "JobConfig.json").is_file():
        job_config = root / "JobConfig.json"
    if job_config is not None and not job_config.is_file():
        raise project.fail("configurations", f"lists {job_config.name}, which is not in the "
                           "project")
    candidates = [*by_kind.get("input", []), *by_kind.get("inputmock", []),
                  *by_kind.get("output", []),
                  *sorted((root / "Inputs").glob("*.json")),
                  *sorted((root / "Outputs").glob("*.json"))]
    inputs, mocks, outputs = {}, {}, {}
    for path in dict.fromkeys(candidates):  # each file once, in order
        if not path.is_file():
            raise project.fail("configurations", f"lists {path.relative_to(root)}, which is "
                               "not in the project")
        config = _read_json(path)
        kind = str(config.get("ScriptType") or "").lower()
        name_field = "InputAlias" if kind == "inputmock" else "Name"
        alias = config.get(name_field)
        if kind not in ("input", "inputmock", "output"):
            raise config.fail("ScriptType", f"is {config.get('ScriptType')!r}: an input or output "
                              "file of a project says Input, InputMock or Output")
        if not isinstance(alias, str) or not alias.strip():
            raise config.fail(name_field, "is missing: it is the alias the query uses")
        found = {"input": inputs, "inputmock": mocks, "output": outputs}[kind]
        if alias.lower() in {a.lower() for a in found}:
            raise config.fail(name_field, f"'{alias}' is used by another {kind} file too")
        found[alias] = config
    return Project(root, query, job_config, inputs, mocks, outputs)


def _read_json(path: Path) -> ConfigFile:
    try:
        data = json.loads(path.read_text(encoding="utf-8-sig"))
    except OSError as error:
        raise ProjectError(f"{path}: cannot be read: {error.strerror}") from None
    except UnicodeDecodeError:
        raise ProjectError(f"{path}: is not UTF-8 text") from None
    except ValueError as error:
        raise ProjectError(f"{path}: is not JSON: {error}") from None
    if not isinstance(data, dict):
        raise ProjectError(f"{path}: is not a JSON object")
    return ConfigFile(path, data)


def _local_path(text: str) -> Path:
    """A path as the extension writes it (Windows separators) → a local relative path."""
    return Path(text.replace("\\", "/"))
