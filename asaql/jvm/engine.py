"""The JVM engine's jar and its entry points.

The jar is compiled from the Scala sources (`jvm/src/main/scala` in a checkout, `asaql/jvm/src`
in a wheel) by the Scala 2.13 compiler pyspark's wheel ships beside Spark's jars, run on the
Java that Spark needs anyway: no JDK tools, Maven or download. It is looked for first inside
the package (a wheel built by `pip wheel .` ships it), then in the cache
(`$ASAQL_CACHE_DIR`, else `$XDG_CACHE_HOME/asaql`, else `~/.cache/asaql`) under the hash of its
sources and of pyspark's version, and built there at first use (about 10 s), under a file lock
so that processes starting together build it once.

Everything the Python side calls in the JVM is named here. No pyspark import at module level:
the wheel's build hook (hatch_build.py) loads this file on its own.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import shutil
import subprocess
import tempfile
import zipfile
from dataclasses import dataclass
from pathlib import Path

# Entry points (jvm/src/main/scala/asaql/engine/Functions.scala)
EXTENSIONS = "asaql.engine.Extensions"  # spark.sql.extensions: registers the functions
ROW_CACHE = "asaql.engine.RowCache"  # spark.sql.cache.serializer: micro-batches cached as rows
FUNCTIONS = "asaql.engine.Functions"  # .register(session), .version()
JSON_RECORD = "asaql_json_record"  # (text, schema json, options json, max depth) → record, clean
JSON_TEXTS = "asaql_json_texts"  # (text) → from_json(text, 'array<string>')
BRACKET_DEPTH = "asaql_bracket_depth"  # (text) → the deepest nesting outside strings
TOP_LEVEL_VALUES = "asaql_top_level_values"  # (text) → values closed at the top level
REPEATED_KEY = "asaql_repeated_key"  # (keys, lower-cased keys) → the first key there twice
EXACT_SUM = "asaql_exact_sum"  # aggregate (doubles, or sums it gave) → the exact sum, serialized
EXACT_SUM_VALUE = "asaql_exact_sum_value"  # (serialized sum) → rounded once to a double
ARRIVAL_BREAK = "asaql_arrival_break"  # (segment, arrival, position) → read out of arrival order?
PRIOR_MAX = "asaql_prior_max"  # (segment, position, value, seeds json) → largest value before
INFER_JSON = "asaql_infer_json"  # aggregate (line, max depth) → JSON: the lines' merged type
INFER_SAMPLE = "asaql.engine.InferJson"  # sample(files, bytes per file, max depth): in the driver
GROUPED = "asaql_grouped"  # aggregate (ops, group count, groups..., values...) → JSON rows
LEAST_BY = "asaql_least_by"  # aggregate (text, keys...) → the text of the least keys
PARTITION_DIGITS = "asaql_partition_digits"  # (text) → the first PartitionId's digits (discovery)
ORDERED_LINE = "asaql_ordered_line"  # (order values…, line) → the line as a task stages it
ORDERED_LINES = "asaql.engine.OrderedLines"  # merge(parts, kinds, target): the driver's merge
FRAMES = "asaql.engine.Frames"  # select(frame, JSON array of SQL texts): a projection in one call
DATETIME_TEXT = "asaql_datetime_text"  # (timestamp) → ASA's text of it (DatetimeText.scala)
JSON_LINE = "asaql_json_line"  # (struct) → to_json(struct) with NULLs kept (JsonLine.scala)
ISO_TIMESTAMP = "asaql_timestamp"  # (text) → try_to_timestamp(text), the ISO form read directly
ARRIVAL_TEXT = "asaql_arrival_text"  # (text) → the first EventEnqueuedUtcTime's text (discovery)
TEXT_LINES = "asaql_lines"  # (text) → split(text, '\n'): its lines, cut from its bytes
ENGINE_VERSION = "17"  # Functions.Version: a jar of another version is not used

JAR_NAME = "asaql-engine.jar"
HASH_NAME = "asaql-engine.hash"
_PACKAGE = Path(__file__).resolve().parent
_SOURCE_PLACES = (_PACKAGE / "src", _PACKAGE.parents[1] / "jvm" / "src" / "main" / "scala")


@dataclass(frozen=True)
class EngineJar:
    """The jar to load (`path`), or why there is none (`problem`, one line)."""
    path: Path | None
    problem: str | None = None


def sources() -> list[Path]:
    """The Scala sources, in a fixed order (their hash names the jar)."""
    for place in _SOURCE_PLACES:
        found = sorted(place.rglob("*.scala")) if place.is_dir() else []
        if found:
            return found
    return []


def pyspark_jars() -> Path | None:
    """The folder of Spark's jars inside the installed pyspark (the compiler is there too)."""
    try:
        import importlib.util

        spec = importlib.util.find_spec("pyspark")
    except (ImportError, ValueError):
        return None
    if spec is None or spec.origin is None:
        return None
    jars = Path(spec.origin).parent / "jars"
    return jars if jars.is_dir() else None


def source_hash(files: list[Path], jars: Path | None) -> str:
    """Of the sources (names and text), the engine version and the Spark jars compiled
    against (the compiler's and Spark's own file names carry their versions)."""
    digest = hashlib.sha256(ENGINE_VERSION.encode())
    for path in files:
        digest.update(path.name.encode() + b"\0" + path.read_bytes() + b"\0")
    if jars is not None:
        for name in sorted(p.name for p in jars.glob("spark-*.jar")):
            digest.update(name.encode())
    return digest.hexdigest()[:20]


def cache_dir() -> Path:
    root = os.environ.get("ASAQL_CACHE_DIR")
    if root:
        return Path(root)
    xdg = os.environ.get("XDG_CACHE_HOME")
    return (Path(xdg) if xdg else Path.home() / ".cache") / "asaql"


def java_command() -> str | None:
    """The `java` Spark itself would run: $JAVA_HOME/bin/java, else the one on PATH."""
    home = os.environ.get("JAVA_HOME")
    if home and (Path(home) / "bin" / "java").is_file():
        return str(Path(home) / "bin" / "java")
    return shutil.which("java")


def engine_jar(build: bool = True) -> EngineJar:
    """The jar for these sources: shipped, cached, or (`build`) compiled now into the cache."""
    files, jars = sources(), pyspark_jars()
    if not files:
        return EngineJar(None, "the engine's Scala sources are not installed")
    wanted = source_hash(files, jars)
    shipped = _PACKAGE / JAR_NAME
    if shipped.is_file() and _read(_PACKAGE / HASH_NAME) == wanted:
        return EngineJar(shipped)
    cached = cache_dir() / "jvm" / wanted / JAR_NAME
    if cached.is_file():
        return EngineJar(cached)
    if not build:
        return EngineJar(None, "not built yet (it is built at the first run)")
    try:
        problem = build_jar(cached, files, jars)
    except OSError as error:  # a cache that cannot be written (a read-only home)
        problem = f"cannot build it in {cache_dir()}: {error.strerror or error}"
    return EngineJar(None, problem) if problem else EngineJar(cached)


def engine_problem_without_spark(engine: str) -> str | None:
    """Why records would not go through the JVM engine, as far as it is known without a
    session (`asaql explain`): None when the jar is there or can be built at the first run."""
    if engine != "jvm":
        return "--engine python"
    jar = engine_jar(build=False)
    if jar.path is not None:
        return None
    if not sources():
        return jar.problem
    return _cannot_compile(pyspark_jars())


def _cannot_compile(jars: Path | None) -> str | None:
    """Why the Scala compiler cannot run here, or None."""
    if java_command() is None:
        return "no java found (JAVA_HOME or PATH) to run the Scala compiler"
    if jars is None or not list(jars.glob("scala-compiler-*.jar")):
        return "pyspark's wheel has no Scala compiler (jars/scala-compiler-*.jar)"
    return None


def build_jar(target: Path, files: list[Path], jars: Path | None) -> str | None:
    """Compiles `files` into the jar `target` (written aside, then renamed); → the reason it
    could not, in one line, or None."""
    problem = _cannot_compile(jars)
    if problem:
        return problem
    java = java_command()
    target.parent.mkdir(parents=True, exist_ok=True)
    with _locked(target.parent / ".build.lock"):
        if target.is_file():  # another process built it meanwhile
            return None
        with tempfile.TemporaryDirectory(dir=target.parent) as work:
            classes = Path(work) / "classes"
            classes.mkdir()
            compile_run = subprocess.run(
                [java, "-cp", str(jars / "*"), "scala.tools.nsc.Main", "-usejavacp", "-nowarn",
                 "-d", str(classes), *map(str, files)],
                capture_output=True, text=True)
            if compile_run.returncode != 0:
                lines = [line for line in (compile_run.stderr + compile_run.stdout).splitlines()
                         if line.strip()]
                return "the Scala compiler failed: " + (lines[0] if lines else "no message")
            partial = Path(work) / JAR_NAME
            with zipfile.ZipFile(partial, "w", zipfile.ZIP_DEFLATED) as jar:
                jar.writestr("META-INF/MANIFEST.MF", "Manifest-Version: 1.0\n\n")
                for path in sorted(classes.rglob("*.class")):
                    jar.write(path, path.relative_to(classes).as_posix())
            os.replace(partial, target)
    return None


@contextlib.contextmanager
def _locked(path: Path):
    """An exclusive lock on `path` (fcntl where there is one)."""
    with open(path, "a+") as handle:
        try:
            import fcntl
        except ImportError:  # Windows: no lock; a concurrent build renames a whole jar too
            yield
            return
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def _read(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8").strip()
    except OSError:
        return None
