"""Help that reads as a user looks for things: a command's options in titled sections (as
rich-click and click-option-group present them), written by click's own help formatter."""

from __future__ import annotations

import click

OTHER = "Other options"


class SectionedCommand(click.Command):
    """A command whose `--help` lists its options in `sections`: (title, option names) pairs,
    in order; an option no section names is listed under OTHER (tests/unit/test_cli_help.py
    keeps that section empty)."""

    def __init__(self, *args, sections: tuple[tuple[str, tuple[str, ...]], ...] = (),
                 **kwargs):
        super().__init__(*args, **kwargs)
        self.sections = sections

    def format_options(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        records = {param.name: param.get_help_record(ctx) for param in self.get_params(ctx)}
        named = set()
        for title, names in (*self.sections, (OTHER, tuple(records))):
            rows = [records[name] for name in names
                    if records.get(name) and name not in named]
            named.update(names)
            if rows:
                with formatter.section(title):
                    formatter.write_dl(rows)
