"""Every code block of the docs runs as written, and the output a page shows is the output it
gives (as doctest-style tools do).

What "runs" means, by the block's language (every fenced block must name one):

- `bash`: each command runs, in order, in a temporary folder holding a copy of the repository's
  `samples/` (so `samples/...` paths work as from the repository's root, and nothing is left in
  the repository). `asaql …` (and `python -m asaql.cli …`) runs through the real CLI, in process
  on the shared Spark session (click's CliRunner), its paths made absolute in that folder
  (Spark's JVM resolves relative ones against its own working folder); `> FILE` after it
  writes its stdout there. A run with `--follow` runs until the rows its page shows have come
  and it has printed nothing for QUIET seconds, then stops as Ctrl-C does (its streaming
  queries stopped between micro-batches). Other commands (`mkdir`, `cp`, a
  `cat > FILE <<'EOF'` here-document) run in bash. `#` lines are comments.
- `python`: the blocks of a page run in order in one namespace (a later block uses what an
  earlier one made), in the same kind of temporary folder, their stdout captured; a relative
  path handed to Spark resolves against the JVM's folder, the repository's root, so a block
  reads `samples/…` from the repository and writes only to folders it makes (the test fails
  if a block leaves a file in the repository).
- `sql`: an ASA query, written to a file and checked by `asaql check` (it must parse and
  analyse without error; warnings allowed). `<!-- reference data: NAME, … -->` just before it
  names its reference inputs (`--reference NAME`), which the SQL alone does not say.
- `text`: shown, not run: a synopsis, a diagram, or output.

A `text` block just after `<!-- output -->` is the output of the block before it: what the
commands print (stdout and stderr as a terminal shows them), compared line by line after
masking the run's seconds (`… micro-batches in 2.4 s`; under `--follow` the micro-batch count
too). A line `…` stands for lines left out: then every other shown line must be among the real
ones; without it the shown lines are exactly the real ones (in any order: Spark does not order
rows of one micro-batch). A command exits 0, unless the output it shows has an `error:`.

A block that needs what a test run does not have (a Kafka broker, a Spark Connect server, a
cluster, an Event Hub, your own project) says so just before it: `<!-- not run: REASON -->`.
The test asserts that every other block ran.

`python -m pytest tests/docs/test_code_blocks.py --update` rewrites the shown outputs from the
real ones (the lines before and after a `…` kept in number); refused under CI.
"""

from __future__ import annotations

import contextlib
import io
import os
import re
import shlex
import shutil
import subprocess
import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from click.testing import CliRunner

from asaql.cli import cli

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
LANGUAGES = {"bash", "python", "sql", "text"}
FENCE = re.compile(r"^(?P<indent>[ \t]*)(?P<ticks>```+)(?P<lang>[^\s`]*)\s*$")
NOT_RUN = re.compile(r"^\s*<!--\s*not run:\s*(?P<reason>.*?)\s*-->\s*$")
OUTPUT = re.compile(r"^\s*<!--\s*output\s*-->\s*$")
REFERENCE = re.compile(r"^\s*<!--\s*reference data:\s*(?P<names>.*?)\s*-->\s*$")
ELLIPSIS = "…"
QUIET = 2  # seconds without output after which a --follow run has read what there is


@dataclass
class Block:
    page: str
    line: int  # of the opening fence, 1-based
    lang: str
    text: str
    start: int  # the first line of the body (0-based), for --update
    end: int  # the closing fence (0-based)
    not_run: str | None = None
    references: tuple[str, ...] = ()  # a sql block's reference inputs (`<!-- reference data: R -->`)
    is_output: bool = False
    output: "Block | None" = None  # the output block shown after this one
    ran: bool = field(default=False)


def blocks_of(path: Path) -> list[Block]:
    lines = path.read_text().splitlines()
    found, i = [], 0
    while i < len(lines):
        match = FENCE.match(lines[i])
        if not match:
            i += 1
            continue
        indent, ticks = match["indent"], match["ticks"]
        j = i + 1
        while j < len(lines) and lines[j].strip() != ticks:
            j += 1
        assert j < len(lines), f"{path.name}:{i + 1}: a code block that never closes"
        body = [line[len(indent):] if line.startswith(indent) else line.lstrip()
                for line in lines[i + 1:j]]
        before = next((lines[k] for k in range(i - 1, -1, -1) if lines[k].strip()), "")
        not_run, reference = NOT_RUN.match(before), REFERENCE.match(before)
        block = Block(path.name, i + 1, match["lang"].lower(), "\n".join(body), i + 1, j,
                      not_run=not_run["reason"] if not_run else None,
                      references=tuple(n.strip() for n in reference["names"].split(","))
                      if reference else (),
                      is_output=bool(OUTPUT.match(before)))
        if block.is_output:
            assert found and block.lang == "text", \
                f"{path.name}:{i + 1}: an output block is a text block after the block it shows"
            found[-1].output = block
        found.append(block)
        i = j + 1
    return found


PAGES = sorted(p.name for p in DOCS.glob("*.md"))


def test_every_block_says_how_it_runs():
    """A language on every fence, one this test knows; a reason on every block not run."""
    problems = []
    for page in PAGES:
        for block in blocks_of(DOCS / page):
            where = f"{page}:{block.line}"
            if block.lang not in LANGUAGES:
                problems.append(f"{where}: fence language {block.lang!r}: use one of "
                                f"{sorted(LANGUAGES)}")
            if block.not_run is not None and not block.not_run:
                problems.append(f"{where}: `not run:` without a reason")
            if block.not_run is not None and block.lang == "text":
                problems.append(f"{where}: a text block is never run: no `not run:` needed")
            if block.output is not None and block.not_run is not None:
                problems.append(f"{where}: an output shown for a block that is not run")
            if block.lang == "bash":  # run or not, what the copy button copies is commands
                problems += [f"{where}: {problem}" for problem in shell_problems(block.text)]
    assert not problems, "\n".join(problems)


def shell_problems(text: str) -> list[str]:
    """Prose in a bash block: bash's own syntax check, and a command line that starts with a
    space (a comment that lost its `#`, a sentence pasted as a command)."""
    found = []
    syntax = subprocess.run(["bash", "-n"], input=text, capture_output=True, text=True)
    if syntax.returncode != 0:
        found.append(f"not bash: {syntax.stderr.strip()}")
    for command in commands(text):
        if command[:1].isspace():
            found.append(f"a command starts with a space (prose?): {command.strip()[:60]!r}")
    return found


# -- running ----------------------------------------------------------------------------------

class WatchedRunner(CliRunner):
    """CliRunner whose captured output can be read while the command runs (for --follow)."""

    streams = None

    @contextlib.contextmanager
    def isolation(self, *args, **kwargs):
        with super().isolation(*args, **kwargs) as streams:
            self.streams = streams
            yield streams

    def so_far(self) -> str:
        return "" if self.streams is None else \
            self.streams[2].getvalue().decode("utf-8", "replace")


def commands(text: str) -> list[str]:
    """A bash block's commands: continuation lines joined, a here-document kept with its
    command, comment and blank lines dropped."""
    lines, out, i = text.splitlines(), [], 0
    while i < len(lines):
        line = lines[i]
        i += 1
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        while line.endswith("\\") and i < len(lines):
            line = line[:-1] + " " + lines[i].strip()
            i += 1
        heredoc = re.search(r"<<-?\s*'?\"?(\w+)'?\"?", line)
        if heredoc:
            body = []
            while i < len(lines) and lines[i].strip() != heredoc.group(1):
                body.append(lines[i])
                i += 1
            line = "\n".join([line, *body, lines[i] if i < len(lines) else ""])
            i += 1
        out.append(line)
    return out


def asaql_args(words: list[str]) -> list[str] | None:
    if words[:1] == ["asaql"]:
        return words[1:]
    if words[:3] == ["python", "-m", "asaql.cli"]:
        return words[3:]
    return None


PATH_OPTIONS = {"--input", "--output", "--reference", "--errors", "--metrics", "--checkpoint",
                "--report", "--job-config", "--functions", "--kafka-config", "--junit",
                "--reports", "--config", "--query", "--output-path"}


def absolute(path: str, folder: Path) -> str:
    """A path of the command, made absolute in `folder`: Spark's JVM resolves a relative path
    against its own working folder (the repository's, where the shared session started), not
    the test's. A topic or a connection string stays."""
    if "://" in path or path.startswith(("/", "Endpoint=")):
        return path
    return str(folder / path)


def absolute_paths(args: list[str], folder: Path) -> list[str]:
    out, positional = [], True
    for i, arg in enumerate(args):
        option = args[i - 1] if i else ""
        if option in {"--input", "--output", "--reference"} and "=" in arg \
                and not arg.startswith("Endpoint="):
            alias, path = arg.split("=", 1)  # ALIAS=PATH
            out.append(f"{alias}={absolute(path, folder)}")
        elif option == "--reference":
            out.append(arg)  # a bare ALIAS (check, explain)
        elif option in PATH_OPTIONS:
            out.append(absolute(arg, folder))  # --input PATH for a single input, --errors…
        elif i > 0 and positional and not arg.startswith("-"):
            out.append(absolute(arg, folder))  # QUERY.sql or a project folder
            positional = False
        else:
            out.append(arg)
    return out


def run_asaql(spark, args: list[str], expected: Block | None, folder: Path,
              update: bool = False):
    """(exit code, what it printed) of one asaql command."""
    redirect = None
    if ">" in args:
        at = args.index(">")
        redirect, args = folder / args[at + 1], args[:at]
    args = absolute_paths(args, folder)
    if "--follow" not in args:
        result = CliRunner().invoke(cli, args)
        said = result.output
        if redirect is not None:
            redirect.write_text(result.stdout)
            said = result.stderr
        return result.exit_code, said
    # --follow: wait for the rows the page shows and QUIET seconds without a new line, then
    # stop as Ctrl-C does
    assert expected is not None, "a --follow run shows its output, which says when to stop"
    wanted = [line for line in expected.text.splitlines()
              if line.strip() and line != ELLIPSIS and not line.startswith("asaql:")]
    runner, outcome = WatchedRunner(), {}
    thread = threading.Thread(target=lambda: outcome.update(result=runner.invoke(cli, args)),
                              daemon=True)
    thread.start()
    deadline, said, since = time.monotonic() + 120, "", time.monotonic()
    while thread.is_alive() and time.monotonic() < deadline:
        time.sleep(0.5)
        now = runner.so_far()
        if now != said:
            said, since = now, time.monotonic()
        seen = update or all(line in said.splitlines() for line in wanted)
        if seen and said and time.monotonic() - since >= QUIET:
            break
    for query in spark.streams.active:  # the run ends when its queries do, as on Ctrl-C
        query.stop()
    thread.join(120)
    assert not thread.is_alive(), "the --follow run did not end after its queries stopped"
    result = outcome["result"]
    return result.exit_code, result.output


def run_bash(spark, block: Block, folder: Path, update: bool) -> str:
    said = []
    for command in commands(block.text):
        words = shlex.split(command.split("\n")[0], comments=True)
        args = asaql_args(words)
        if args is None:
            assert "asaql" not in words, f"{command!r}: asaql in a shell command is not run"
            done = subprocess.run(["bash", "-c", command], cwd=folder, capture_output=True,
                                  text=True, timeout=60)
            assert done.returncode == 0, f"{command!r}: {done.stdout}{done.stderr}"
            said.append(done.stdout + done.stderr)
            continue
        code, output = run_asaql(spark, args, block.output, folder, update)
        shown = output if update else "" if block.output is None else block.output.text
        shows_error = block.output is not None and "error:" in shown
        assert code == 0 or (shows_error and code == 1), \
            f"{command!r} exited {code}:\n{output}"
        said.append(output)
    return "".join(said)


def run_python(block: Block, namespace: dict) -> str:
    captured = io.StringIO()
    with contextlib.redirect_stdout(captured):
        exec(compile(block.text, f"docs/{block.page}:{block.line}", "exec"), namespace)
    return captured.getvalue()


def check_sql(block: Block, folder: Path) -> str | None:
    """None when `asaql check` passes the block's query, else what it says."""
    query = folder / f"block-{block.line}.sql"
    query.write_text(block.text + "\n")
    references = [word for name in block.references for word in ("--reference", name)]
    result = CliRunner().invoke(cli, ["check", str(query), *references])
    return None if result.exit_code == 0 else \
        f"docs/{block.page}:{block.line}: asaql check:\n{result.output}"


# -- comparing --------------------------------------------------------------------------------

def masked(line: str, follow: bool) -> str:
    line = re.sub(r"micro-batch(es)? in \d+(\.\d+)? s\b", r"micro-batch\1 in (seconds) s",
                  line.rstrip())
    if follow:
        line = re.sub(r"\b\d+ micro-batch", "(count) micro-batch", line)
    return line


def compare(block: Block, actual: str, folder: Path) -> str | None:
    """None when the shown output is the real one, else what differs."""
    follow = "--follow" in block.text
    real = [masked(line.replace(str(folder) + os.sep, ""), follow)
            for line in actual.splitlines() if line.strip()]
    shown = [masked(line, follow) for line in block.output.text.splitlines() if line.strip()]
    cut = ELLIPSIS in shown
    shown_lines = Counter(line for line in shown if line != ELLIPSIS)
    missing = shown_lines - Counter(real)
    extra = Counter(real) - shown_lines
    if missing or (extra and not cut):
        return (f"docs/{block.page}:{block.line}: the output shown is not the real one\n"
                f"shown, not printed: {sorted(missing.elements())}\n"
                + ("" if cut else f"printed, not shown: {sorted(extra.elements())}\n")
                + "printed:\n" + "\n".join(real))
    return None


def updated(block: Block, actual: str, folder: Path) -> list[str]:
    """The output block's new lines: the real ones, as many before and after a `…` as shown."""
    real = [line.rstrip().replace(str(folder) + os.sep, "")
            for line in actual.splitlines() if line.strip()]
    shown = block.output.text.splitlines()
    if ELLIPSIS not in shown:
        return real
    at = shown.index(ELLIPSIS)
    head, tail = max(at, 1), len(shown) - at - 1
    if len(real) > head + tail:
        return real[:head] + [ELLIPSIS] + (real[len(real) - tail:] if tail else [])
    return real


def workspace(tmp_path: Path) -> Path:
    folder = tmp_path / "work"
    shutil.copytree(ROOT / "samples", folder / "samples")
    return folder


RUN_PAGES = [page for page in PAGES if any(
    b.lang in {"bash", "python", "sql"} and b.not_run is None for b in blocks_of(DOCS / page))]


@pytest.mark.parametrize("page", RUN_PAGES)
def test_the_blocks_of_a_page_run_as_written(page, spark, tmp_path, request):
    update = request.config.getoption("--update")
    if update and os.environ.get("CI") == "true":
        pytest.fail("--update rewrites the docs' outputs: not under CI")
    folder = workspace(tmp_path)
    blocks = blocks_of(DOCS / page)
    namespace = {"__name__": f"docs_{page}"}
    before = set(os.listdir(ROOT))
    old = os.getcwd()
    os.chdir(folder)
    problems, rewrites = [], []
    try:
        for block in blocks:
            if block.is_output or block.lang == "text" or block.not_run is not None:
                continue
            if block.lang == "sql":
                if (problem := check_sql(block, folder)) is not None:
                    problems.append(problem)
                block.ran = True
                continue
            actual = run_bash(spark, block, folder, update) if block.lang == "bash" \
                else run_python(block, namespace)
            block.ran = True
            if block.output is not None:
                if update:
                    rewrites.append((block.output, updated(block, actual, folder)))
                elif (problem := compare(block, actual, folder)) is not None:
                    problems.append(problem)
    finally:
        os.chdir(old)
        for query in spark.streams.active:  # nothing a block started outlives it
            query.stop()
    assert set(os.listdir(ROOT)) == before, "a docs block left files in the repository"
    if rewrites:
        lines = (DOCS / page).read_text().splitlines()
        for output, new in sorted(rewrites, key=lambda r: -r[0].start):
            indent = re.match(r"\s*", lines[output.start - 1]).group(0)
            lines[output.start:output.end] = [indent + line for line in new]
        (DOCS / page).write_text("\n".join(lines) + "\n")
    assert all(b.ran for b in blocks
               if b.lang in {"bash", "python", "sql"} and b.not_run is None)
    assert not problems, "\n\n".join(problems)
