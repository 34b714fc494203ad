"""A folder output's micro-batch: its part files appear under names of their own, replacing
those an interrupted attempt at the same micro-batch published."""

from __future__ import annotations

from urllib.parse import quote

from asaql.spark.sinks.part_files import (
    PATH_COLUMN, STAGING_FOLDER, clear_part_files, publish_by_path, publish_part_files,
)


def stage(folder, name: str, parts: list[str]):
    staging = folder / STAGING_FOLDER / name
    staging.mkdir(parents=True)
    for number, text in enumerate(parts):
        (staging / f"part-{number:05d}-abc-c000.txt").write_text(text)
    (staging / "_SUCCESS").write_text("")
    return staging


def test_a_replayed_micro_batch_replaces_the_parts_of_the_interrupted_attempt(tmp_path):
    other = tmp_path / "part-00000007-0-1-00000.txt"  # another statement's part
    other.write_text("other\n")
    publish_part_files(stage(tmp_path, "a", ["a\n", "b\n", "c\n"]), tmp_path, "part-00000007-0-0-")
    publish_part_files(stage(tmp_path, "b", ["", "a b\n"]), tmp_path, "part-00000007-0-0-")
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "part-00000007-0-0-00000.txt", "part-00000007-0-1-00000.txt"]
    assert (tmp_path / "part-00000007-0-0-00000.txt").read_text() == "a b\n"
    assert other.read_text() == "other\n"


def test_a_fresh_run_clears_the_part_files_of_an_earlier_run_only(tmp_path):
    (tmp_path / "part-00000-1234-c000.txt").write_text("old\n")
    (tmp_path / ".part-00000-1234-c000.txt.crc").write_text("")
    (tmp_path / "_SUCCESS").write_text("")
    (tmp_path / "notes.md").write_text("mine")
    clear_part_files(str(tmp_path))
    assert [p.name for p in tmp_path.iterdir()] == ["notes.md"]


def test_a_path_patterns_parts_go_to_the_subfolder_spark_named_and_replace_a_replays(tmp_path):
    def staged(parts: dict[str, list[str]]):
        staging = tmp_path / STAGING_FOLDER / "part-00000003-0-0"
        for path, texts in parts.items():
            written = staging / f"{PATH_COLUMN}={quote(path, safe='')}"
            written.mkdir(parents=True)
            for number, text in enumerate(texts):
                (written / f"part-{number:05d}-abc.c000.txt").write_text(text)
        return staging

    publish_by_path(staged({"2024/03/01/08": ["a\n", "b\n"], "2024/03/01/09": ["c\n"]}),
                    tmp_path, "part-00000003-0-0-", ".txt", keep=True)
    # the replay of the same micro-batch gives one part in 08: the second one goes
    publish_by_path(staged({"2024/03/01/08": ["a b\n"], "2024/03/01/09": ["c\n"]}),
                    tmp_path, "part-00000003-0-0-", ".txt", keep=True)
    found = sorted(str(p.relative_to(tmp_path)) for p in tmp_path.rglob("part-*"))
    assert found == ["2024/03/01/08/part-00000003-0-0-00000.txt",
                     "2024/03/01/09/part-00000003-0-0-00000.txt"]
    assert (tmp_path / found[0]).read_text() == "a b\n"
    assert not (tmp_path / STAGING_FOLDER).exists()
    clear_part_files(str(tmp_path))  # a fresh run: the subfolders' parts go too
    assert not list(tmp_path.rglob("part-*"))
