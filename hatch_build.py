"""The wheel's build step: the JVM engine's jar compiled from jvm/ and shipped inside the wheel
(`asaql/jvm/asaql-engine.jar`, with the hash of the sources it was built from). An editable
install ships nothing: its jar is built at first use into the cache (asaql/jvm/engine.py)."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from hatchling.builders.hooks.plugin.interface import BuildHookInterface

ROOT = Path(__file__).resolve().parent


def _engine_module():
    """asaql/jvm/engine.py on its own (the build environment has none of asaql's dependencies)."""
    spec = importlib.util.spec_from_file_location("asaql_jvm_engine",
                                                  ROOT / "asaql" / "jvm" / "engine.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


def _spark_jars(engine) -> Path | None:
    """pyspark's jars: in the build environment, at $SPARK_HOME, or in the environment pip was
    run from (an isolated build environment hides it: asked without the isolation)."""
    found = engine.pyspark_jars()
    if found is not None:
        return found
    home = os.environ.get("SPARK_HOME")
    if home and (Path(home) / "jars").is_dir():
        return Path(home) / "jars"
    clean = {k: v for k, v in os.environ.items()
             if k not in ("PYTHONPATH", "PYTHONNOUSERSITE", "PYTHONHOME")}
    asked = subprocess.run(
        [sys.executable, "-c", "import os, pyspark; print(os.path.dirname(pyspark.__file__))"],
        capture_output=True, text=True, env=clean, cwd=tempfile.gettempdir())
    jars = Path(asked.stdout.strip()) / "jars" if asked.returncode == 0 else None
    return jars if jars is not None and jars.is_dir() else None


class CustomBuildHook(BuildHookInterface):
    def initialize(self, version: str, build_data: dict) -> None:
        if self.target_name != "wheel" or version == "editable":
            return
        engine = _engine_module()
        jars = _spark_jars(engine)
        if jars is None:
            raise RuntimeError("building asaql's wheel compiles its JVM engine with the Scala "
                               "compiler in pyspark's wheel: install pyspark 4.3 first, or set "
                               "SPARK_HOME to a Spark 4.3 with jars/scala-compiler-*.jar")
        sources = engine.sources()
        out = Path(tempfile.mkdtemp(prefix="asaql-wheel-jar-"))
        problem = engine.build_jar(out / engine.JAR_NAME, sources, jars)
        if problem:
            raise RuntimeError(f"the JVM engine's jar could not be built: {problem}")
        (out / engine.HASH_NAME).write_text(engine.source_hash(sources, jars), encoding="utf-8")
        build_data["force_include"][str(out / engine.JAR_NAME)] = f"asaql/jvm/{engine.JAR_NAME}"
        build_data["force_include"][str(out / engine.HASH_NAME)] = f"asaql/jvm/{engine.HASH_NAME}"
