"""The job functions of an ASA project: `Functions/NAME.js` with its `NAME.js.json` (or
`NAME.json`), as the VS Code and Visual Studio ASA tools write them:

    {"Name": "hex2Int", "Type": "Scalar", "OutputType": "bigint", "ScriptType": "JSFunction",
     "FunctionInputs": [{"DataType": "any"}]}

`Type` is Scalar (a UDF, `udf.NAME(…)`) or Aggregate (a UDA, `uda.NAME(…)`). A C# function
(`ScriptType` CSharpFunction, a `Microsoft.StreamAnalytics/CLRUdf` binding, or a `.cs` file)
needs .NET, which asaql does not run. No pyspark, no engine: `asaql check` reads these too.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from asaql.errors import ConfigurationError

# ASA's output types (the portal's list) → the name asaql uses; `any` decides per value.
OUTPUT_TYPES = {
    "any": "any", "bigint": "bigint", "float": "float", "nvarchar(max)": "nvarchar(max)",
    "nvarchar": "nvarchar(max)", "string": "nvarchar(max)", "datetime": "datetime",
    "bit": "bit", "boolean": "bit", "record": "record", "array": "array",
}


@dataclass(frozen=True)
class JsFunction:
    name: str         # as the query calls it after `udf.` / `uda.` (matched without case)
    aggregate: bool   # a UDA (Type: Aggregate)
    script: str       # the .js file's text
    output_type: str  # one of OUTPUT_TYPES' values
    path: str         # the .js file, for messages

    @property
    def call_name(self) -> str:
        return f"{'uda' if self.aggregate else 'udf'}.{self.name}"


def read_functions(folder: str) -> dict[str, JsFunction]:
    """`udf.name` / `uda.name` (lower case) → the function, for every .js in `folder`."""
    root = Path(folder)
    if not root.is_dir():
        raise ConfigurationError(f"--functions {folder}: not a folder (it holds NAME.js and "
                                 "NAME.js.json files, as an ASA project's Functions/)")
    found: dict[str, JsFunction] = {}
    for cs in sorted(root.glob("*.cs")):
        raise _needs_dotnet(cs.stem, cs)
    for script in sorted(root.glob("*.js")):
        function = _read_function(script)
        key = function.call_name.lower()
        if key in found:
            raise ConfigurationError(f"{script}: the function '{function.name}' is defined twice "
                                     f"(also {found[key].path})")
        found[key] = function
    for meta in sorted(root.glob("*.json")):
        _check_orphan(meta)
    return found


def _read_function(script: Path) -> JsFunction:
    meta_path = next((p for p in (script.with_name(script.name + ".json"),
                                  script.with_suffix(".json")) if p.is_file()), None)
    meta = _read_json(meta_path) if meta_path is not None else {}
    if _is_csharp(meta):
        raise _needs_dotnet(script.stem, meta_path)
    kind = str(_get(meta, "Type") or "Scalar").lower()
    if kind not in ("scalar", "aggregate"):
        raise ConfigurationError(f"{meta_path}: Type is {_get(meta, 'Type')!r}: a JavaScript "
                                 "function is Scalar (udf.) or Aggregate (uda.)")
    output = str(_get(meta, "OutputType") or _get(meta, "Output", "DataType") or "any").lower()
    if output not in OUTPUT_TYPES:
        raise ConfigurationError(f"{meta_path}: OutputType {output!r} is not one of ASA's: "
                                 f"{', '.join(sorted(set(OUTPUT_TYPES.values())))}")
    try:
        text = script.read_text(encoding="utf-8-sig")
    except (OSError, UnicodeDecodeError) as error:
        raise ConfigurationError(f"{script}: cannot be read: {error}") from None
    name = str(_get(meta, "Name") or script.stem)
    return JsFunction(name, kind == "aggregate", text, OUTPUT_TYPES[output], str(script))


def _check_orphan(meta: Path) -> None:
    """A C# function's description with no .js beside it still says what it needs."""
    if meta.name.endswith(".js.json") or meta.with_suffix(".js").is_file():
        return
    data = _read_json(meta)
    if _is_csharp(data):
        raise _needs_dotnet(str(_get(data, "Name") or meta.stem), meta)


def _is_csharp(meta: dict) -> bool:
    script_type = str(_get(meta, "ScriptType") or "").lower()
    binding = str(_get(meta, "Properties", "Properties", "Binding", "Type")
                  or _get(meta, "Binding", "Type") or "").lower()
    return script_type.startswith(("csharp", "clr")) or "clrudf" in binding


def _needs_dotnet(name: str, path) -> ConfigurationError:
    return ConfigurationError(f"{path}: '{name}' is a C# function: it needs .NET, which asaql "
                              "does not run (JavaScript functions run; rewrite it in JavaScript)")


def _get(data, *keys):
    for key in keys:
        if not isinstance(data, dict):
            return None
        data = next((v for k, v in data.items() if k.lower() == key.lower()), None)
    return data


def _read_json(path: Path) -> dict:
    try:
        data = json.loads(path.read_text(encoding="utf-8-sig"))
    except (OSError, UnicodeDecodeError, ValueError) as error:
        raise ConfigurationError(f"{path}: cannot be read as JSON: {error}") from None
    if not isinstance(data, dict):
        raise ConfigurationError(f"{path}: is not a JSON object")
    return data
