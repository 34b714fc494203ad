"""What a Spark Python worker loads when it runs one of asaql's modules: not the compiler. The
package's API (`asaql.compile`, …) loads on first use, so a topic's reader or the general
step's worker does not pay for the parser and the analyzer (0.2 s each worker)."""

from __future__ import annotations

import subprocess
import sys

import pytest

COMPILER = ("asaql.api", "asaql.compiler.pipeline", "asaql.syntax.parser", "lark")


def _loaded(module: str) -> set[str]:
    code = f"import sys, {module}; print('\\n'.join(sorted(sys.modules)))"
    found = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                           check=True)
    return set(found.stdout.split())


@pytest.mark.parametrize("module", ["asaql.spark.sources.kafka_source", "asaql.runtime.step"])
def test_a_workers_module_loads_no_compiler(module):
    loaded = _loaded(module)
    assert module in loaded
    assert not loaded & set(COMPILER)


def test_the_packages_api_loads_on_first_use():
    import asaql

    assert asaql.compile("SELECT * INTO o FROM i").outputs == ("o",)
    assert {"compile", "Query", "EventOrderingPolicy", "topic"} <= set(dir(asaql))
    with pytest.raises(AttributeError):
        asaql.no_such_name  # noqa: B018
