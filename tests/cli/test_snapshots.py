"""What a user reads is unchanged: every ``--help`` and the ``error:`` lines of bad
inputs match the snapshots under ``tests/snapshots/`` (see ``tests/snapshots.py``;
``python tests/snapshots.py --update`` rewrites them on purpose)."""

from __future__ import annotations

from pathlib import Path

import pytest

from snapshots import (
    ERRORS_FILE,
    HELP_DIR,
    HOW_TO_UPDATE,
    command_paths,
    error_snapshot,
    first_difference,
    help_file,
    help_text,
    updating,
)

PATHS = command_paths()


def test_every_command_has_a_help_snapshot() -> None:
    if updating():
        pytest.skip("rewriting the snapshots")
    expected = {help_file(p).name for p in PATHS}
    stored = {f.name for f in HELP_DIR.glob("*.txt")}
    assert stored == expected, (
        f"help snapshots missing: {sorted(expected - stored)}, stale: "
        f"{sorted(stored - expected)}; {HOW_TO_UPDATE}")


@pytest.mark.parametrize("path", PATHS, ids=lambda p: " ".join(("dispatchlab", *p)))
def test_help_unchanged(path: tuple[str, ...]) -> None:
    text = help_text(path)
    file = help_file(path)
    if updating():
        file.parent.mkdir(parents=True, exist_ok=True)
        file.write_text(text, encoding="utf-8")
        return
    assert file.is_file(), f"no snapshot {file.name}; {HOW_TO_UPDATE}"
    stored = file.read_text(encoding="utf-8")
    assert text == stored, (
        f"`dispatchlab {' '.join(path)} --help` differs from {file.name} "
        f"({first_difference(stored, text)}); {HOW_TO_UPDATE}")


def test_error_lines_unchanged(tmp_path: Path) -> None:
    text = error_snapshot(tmp_path)
    if updating():
        ERRORS_FILE.write_text(text, encoding="utf-8")
        return
    stored = ERRORS_FILE.read_text(encoding="utf-8")
    assert text == stored, (
        f"the error lines differ from {ERRORS_FILE.name} "
        f"({first_difference(stored, text)}); {HOW_TO_UPDATE}")


def test_error_lines_are_one_line_and_machine_independent() -> None:
    """The snapshot itself meets the bar: each case one ``error:`` line, status 2,
    and no path of the machine that recorded it."""
    rows = [ln.split(" | ", 2) for ln in ERRORS_FILE.read_text(encoding="utf-8")
            .splitlines() if not ln.startswith("#")]
    assert len({case for case, _, _ in rows}) == len(rows) > 30
    for case, status, line in rows:
        assert status == "2", case
        assert line.startswith("error: ") and " / " not in line, case
        assert str(Path.home()) not in line and "/tmp" not in line, case
