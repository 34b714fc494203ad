"""The shape of asaql's imports (docs/design.md, "Layers"): no cycle among its modules, no layer
importing one above it, and each third-party engine owned by one layer. Imports inside
functions count: a lazy import is still a dependency."""

from __future__ import annotations

import ast
import graphlib
import sys
from pathlib import Path

import pytest

PACKAGE = Path(__file__).parents[2] / "asaql"

# Layer → the asaql packages and modules it must never import, directly or lazily.
EXECUTION = ("asaql.spark.sinks", "asaql.spark.execute", "asaql.spark.embed",
             "asaql.spark.metrics", "asaql.spark.session")
APP = ("asaql.cli", "asaql.api", "asaql.compiler", "asaql.run.runner", "asaql.testing",
       "asaql.project")
# What a run reads and writes, without Spark: below the engine, which reads through them.
FILES = ("asaql.inputs", "asaql.outputs", "asaql.run.checkpoint_manifest")
FORBIDDEN = {
    "asaql.errors": ("asaql.",),
    "asaql.core": ("asaql.",),
    # the JVM engine's jar and entry points: loaded on its own by the wheel's build hook
    "asaql.jvm": ("asaql.",),
    "asaql.syntax": ("asaql.analysis", "asaql.plan", "asaql.spark", "asaql.runtime", *APP),
    "asaql.analysis": ("asaql.plan", "asaql.spark", "asaql.runtime", *APP),
    "asaql.plan": ("asaql.spark", "asaql.runtime", *APP),
    "asaql.runtime": ("asaql.syntax", "asaql.analysis", "asaql.plan", "asaql.spark",
                      "asaql.inputs", "asaql.outputs", *APP),
    # inputs, then outputs (an output path is checked against the input suffixes), then where a
    # run reads and writes: none knows queries or Spark
    **{files: ("asaql.syntax", "asaql.analysis", "asaql.plan", "asaql.spark", "asaql.runtime",
               "asaql.kafka", *APP, *(("asaql.outputs", "asaql.run") if files == "asaql.inputs"
                                      else ()))
       for files in FILES},
    # the Kafka client knows brokers and topics, nothing of queries or Spark
    "asaql.kafka": ("asaql.syntax", "asaql.analysis", "asaql.plan", "asaql.runtime",
                    "asaql.spark", *APP),
    # JavaScript functions: their files and engine, used by the backend and the runtime
    "asaql.javascript": ("asaql.syntax", "asaql.analysis", "asaql.plan", "asaql.spark",
                         "asaql.runtime", *APP),
    # the pictures of a job: they read the plan's job graph and the run's numbers as plain
    # data, never Spark or the compiler (the CLI wires them to a run)
    "asaql.pages": ("asaql.syntax", "asaql.analysis", "asaql.spark", "asaql.runtime",
                    "asaql.kafka", *APP),
    # the engine: nothing of the run above it (its runner, manifest and options)
    "asaql.spark": ("asaql.syntax", "asaql.analysis", "asaql.plan.planner",
                    "asaql.plan.translate", "asaql.run", *APP),
    # inside the Spark backend: the lowering of expressions and relations reads the plan, the
    # stateful operators wire it to sources and runtime steps, the execution side runs them
    "asaql.spark.lowering": ("asaql.spark.operators", "asaql.spark.sources.step_input",
                             "asaql.spark.sources.io", "asaql.spark.sources.control",
                             "asaql.spark.sources.reference", *EXECUTION),
    "asaql.spark.operators": EXECUTION,
    # what a run reads knows nothing of the operators, the writers or the session
    "asaql.spark.sources": ("asaql.spark.operators", *EXECUTION),
    # what a run writes: the statements' output lines and the records' places, no session
    "asaql.spark.sinks": ("asaql.spark.execute", "asaql.spark.embed", "asaql.spark.metrics",
                          "asaql.spark.session"),
    # the session knows no query
    "asaql.spark.session": ("asaql.spark.operators", "asaql.spark.sources", "asaql.spark.sinks",
                            "asaql.spark.lowering", "asaql.spark.execute", "asaql.spark.embed"),
}
# Layers whose transitive imports must stay below them: the backend reads only the plan.
NEVER_REACHES = {
    "asaql.spark": ("asaql.syntax", "asaql.analysis"),
    # the plan's own data and printing; only the planner and its translation read the analysis
    **{f"asaql.plan.{m}": ("asaql.syntax", "asaql.analysis")
       for m in ("nodes", "expressions", "clauses", "policy", "printer", "explain", "aliases")},
    "asaql.runtime": ("asaql.syntax", "asaql.analysis", "asaql.plan", "asaql.spark"),
}
# Third-party engines and the one package allowed to import each.
OWNERS = {"pyspark": "asaql.spark", "py4j": "asaql.spark", "lark": "asaql.syntax",
          "click": "asaql.cli", "confluent_kafka": "asaql.kafka",
          "py_mini_racer": "asaql.javascript", "networkx": "asaql.pages",
          "plotly": "asaql.pages"}


def _module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {_module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


def _imports(name: str) -> set[str]:
    """Every module `name` imports (asaql's resolved to modules; others by top-level name),
    wherever the import statement is."""
    path = MODULES[name]
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                base = ".".join(package.split(".")[:len(package.split(".")) - node.level + 1]
                                + ([base] if base else []))
            for alias in node.names:
                submodule = f"{base}.{alias.name}"
                found.add(submodule if submodule in MODULES else base)
    return found


GRAPH = {name: _imports(name) for name in MODULES}


def _within(name: str, prefix: str) -> bool:
    return name == prefix.rstrip(".") or name.startswith(prefix.rstrip(".") + ".")


def _layer_rules(rules: dict) -> list[tuple[str, tuple]]:
    return [(module, banned) for module in MODULES for layer, banned in rules.items()
            if _within(module, layer)]


def test_no_import_cycle():
    graph = {m: {i for i in imports if i in MODULES} for m, imports in GRAPH.items()}
    try:
        tuple(graphlib.TopologicalSorter(graph).static_order())
    except graphlib.CycleError as error:
        pytest.fail("import cycle: " + " → ".join(reversed(error.args[1])))


@pytest.mark.parametrize("module, banned", _layer_rules(FORBIDDEN),
                         ids=[m for m, _ in _layer_rules(FORBIDDEN)])
def test_no_upward_import(module, banned):
    wrong = sorted(i for i in GRAPH[module] for b in banned
                   if i.startswith("asaql") and (_within(i, b) or b == "asaql."))
    assert not wrong, f"{module} imports {wrong}, above its layer (docs/design.md)"


@pytest.mark.parametrize("module, banned", _layer_rules(NEVER_REACHES),
                         ids=[m for m, _ in _layer_rules(NEVER_REACHES)])
def test_the_backend_and_kernels_never_reach_the_front_end(module, banned):
    seen, todo = set(), [module]
    while todo:
        for imported in GRAPH.get(todo.pop(), ()):
            if imported in MODULES and imported not in seen:
                seen.add(imported)
                todo.append(imported)
    wrong = sorted(m for m in seen for b in banned if _within(m, b))
    assert not wrong, f"{module} reaches {wrong} through its imports"


def test_each_engine_is_imported_by_its_layer_only():
    wrong = sorted((module, imported) for module, imports in GRAPH.items()
                   for imported in imports
                   if imported.split(".")[0] in OWNERS
                   and not _within(module, OWNERS[imported.split(".")[0]]))
    assert not wrong, f"third-party engines imported outside their layer: {wrong}"


def test_the_check_finds_what_it_looks_for():
    # the graph is read from the source: a known edge and a known lazy import are in it
    assert "asaql.syntax.ast" in GRAPH["asaql.syntax.build"]
    assert "asaql.spark.execute" in GRAPH["asaql.run.runner"]  # imported inside run()
    assert "pyspark.sql" in GRAPH["asaql.spark.session.builder"]
    assert sys.modules[__name__]  # collected as a module, not skipped
