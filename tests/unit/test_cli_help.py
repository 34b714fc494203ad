"""The command line's help as a user reads it: every command's summary whole, `run`'s and
`explain`'s options in titled sections (none left over), the duration format where it is asked."""

from __future__ import annotations

import re

import click
import pytest
from click.testing import CliRunner

from asaql.cli import cli
from asaql.cli.help import OTHER


def help_of(*command: str) -> str:
    result = CliRunner().invoke(cli, [*command, "--help"], terminal_width=100)
    assert result.exit_code == 0, result.output
    return result.output


def test_the_command_list_shows_each_summary_whole():
    listed = help_of().split("Commands:\n", 1)[1]
    summaries = dict(line.split(None, 1) for line in listed.splitlines() if line.strip())
    assert set(summaries) == {"check", "explain", "jar", "run", "test"}
    for name, summary in summaries.items():
        assert not summary.endswith("..."), (name, summary)
        assert summary.endswith("."), (name, summary)


@pytest.mark.parametrize("command, sections", [
    ("run", ["Inputs and outputs", "Time policy (ASA's event ordering)", "Bad data",
             "Live runs and restarts", "Topics (Kafka, Event Hubs)", "Folders as Blob containers",
             "Pages and metrics", "Where Spark runs", "Advanced"]),
    ("explain", ["What to show", "Time policy (ASA's event ordering)",
                 "With Spark's own plans", "Help"]),
])
def test_options_are_listed_in_sections_and_none_is_left_over(command, sections):
    text = help_of(command)
    headings = re.findall(r"^(\S[^\n]*):$", text, re.M)
    assert headings == sections
    assert OTHER not in text
    options = {param.opts[0] for param in cli.commands[command].params
               if isinstance(param, click.Option)}
    for option in options:  # each option listed once
        assert len(re.findall(rf"^  {re.escape(option)}(?=[ \n])", text, re.M)) == 1, option


def test_the_policy_options_say_what_a_duration_is_and_which_settings_win():
    text = help_of("run")
    assert "--late DURATION" in text and "500ms, 5s, 10m, 2h, 1d, 1m30s" in " ".join(text.split())
    assert "the options given here win over them" in " ".join(text.split())
    assert "options above" not in text
