"""The grammar ships inside the wheel and loads from an installed (non-editable) copy."""

from __future__ import annotations

import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("wheel")
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(out), str(ROOT)],
                   check=True)
    return next(out.glob("asaql-*.whl"))


def test_wheel_contains_the_grammar(wheel):
    names = zipfile.ZipFile(wheel).namelist()
    assert "asaql/grammar/asaql.lark" in names


def test_installed_copy_parses_with_its_own_grammar(wheel, tmp_path):
    site = tmp_path / "site"
    zipfile.ZipFile(wheel).extractall(site)
    code = (
        "import asaql, asaql.syntax.grammar as g\n"
        "from asaql.syntax import parse\n"
        "q = parse('SELECT * INTO out FROM input TIMESTAMP BY t')\n"
        "print(asaql.__file__)\n"
    )
    # Run from an empty folder with only the unpacked wheel on the path: no repository grammar.
    result = subprocess.run([sys.executable, "-I", "-c", f"import sys; sys.path.insert(0, {str(site)!r})\n" + code],
                            cwd=tmp_path, capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip().startswith(str(site))
