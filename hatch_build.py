"""The wheel's build step: the JVM engine's jar compiled from jvm/ and shipped inside the wheel
(`asaql/jvm/asaql-engine.jar`, with the hash of the sources it was built from). pyspark is a
build requirement (pyproject.toml's [build-system]) for its Scala compiler, so that `pip install
.` in a fresh environment ships the jar. When the jar cannot be built all the same (no pyspark,
no java, the compiler failed), the wheel is built without it, with a warning: the Scala sources
are in the wheel (asaql/jvm/src) and asaql/jvm/engine.py builds the jar from them at first use
into the cache. An editable install ships nothing: its jar is built at first use too."""

from __future__ import annotations

import importlib.util
import os
import shutil
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
    run from (an isolated build environment without the build requirement hides it: asked
    without the isolation)."""
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
    _out: Path | None = None

    def initialize(self, version: str, build_data: dict) -> None:
        if self.target_name != "wheel" or version == "editable":
            return
        try:
            problem = self._build(build_data)
        except Exception as error:  # noqa: BLE001 - any failure: the wheel ships no jar
            problem = f"{type(error).__name__}: {error}"
        if problem:
            self._clean()
            reason = " ".join(problem.split())
            self.app.display_warning(
                f"asaql's JVM engine is not in this wheel ({reason}): it is built at first use "
                "into ~/.cache/asaql, about 10 s")

    def _build(self, build_data: dict) -> str | None:
        """Compiles the jar and adds it to the wheel; → why it could not, or None."""
        engine = _engine_module()
        sources = engine.sources()
        if not sources:
            return "the Scala sources (jvm/src/main/scala) are missing"
        jars = _spark_jars(engine)
        if jars is None:
            return ("no pyspark 4.3 found to compile it with: not in the build environment, "
                    "SPARK_HOME or the environment pip runs in")
        self._out = Path(tempfile.mkdtemp(prefix="asaql-wheel-jar-"))
        problem = engine.build_jar(self._out / engine.JAR_NAME, sources, jars)
        if problem:
            return problem
        (self._out / engine.HASH_NAME).write_text(engine.source_hash(sources, jars),
                                                  encoding="utf-8")
        for name in (engine.JAR_NAME, engine.HASH_NAME):
            build_data["force_include"][str(self._out / name)] = f"asaql/jvm/{name}"
        return None

    def finalize(self, version: str, build_data: dict, artifact_path: str) -> None:
        self._clean()  # the jar is in the wheel now

    def _clean(self) -> None:
        if self._out is not None:
            shutil.rmtree(self._out, ignore_errors=True)
            self._out = None
