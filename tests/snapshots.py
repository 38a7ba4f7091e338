"""Snapshots of what a user reads: every command's ``--help`` and the ``error:`` lines.

Frozen before the layering work so that moving modules provably changes no text a
user sees. Two kinds, both under ``tests/snapshots/``:

- ``help/<command path>.txt``: the ``--help`` output of every command and subcommand
  (the click tree of :data:`dispatchlab.cli.app` walked from the top, aliases
  included), rendered at a fixed terminal width (:data:`WIDTH`) without colour;
- ``errors.txt``: for each bad input of :func:`error_cases` (the table of
  ``tests/cli/test_bad_inputs.py`` plus command-line mistakes), its exit status and its
  ``error:`` line, run in a fresh folder through :func:`dispatchlab.cli.main`; the
  folder's path is replaced by ``<tmp>`` so the file is the same on every machine,
  and a library's text quoted in a message (pyarrow's, DuckDB's) by a placeholder.

``tests/cli/test_snapshots.py`` compares them. To change them on purpose (a reworded help
or message), rewrite them and commit the diff::

    python tests/snapshots.py --update
    DISPATCHLAB_UPDATE_SNAPSHOTS=1 pytest tests/cli/test_snapshots.py   # the same
"""

from __future__ import annotations

import contextlib
import io
import os
import re
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import click
from click.testing import CliRunner

SNAPSHOTS = Path(__file__).resolve().parent / "snapshots"
HELP_DIR = SNAPSHOTS / "help"
ERRORS_FILE = SNAPSHOTS / "errors.txt"
#: the terminal width the help is rendered at (click caps its text at 80 columns)
WIDTH = 100
#: set to 1 to make the snapshot tests rewrite the files instead of comparing
UPDATE_ENV = "DISPATCHLAB_UPDATE_SNAPSHOTS"
HOW_TO_UPDATE = (f"if the change is on purpose, run `python tests/snapshots.py --update` "
                 f"(or {UPDATE_ENV}=1 pytest tests/cli/test_snapshots.py) and commit the "
                 "changed files under tests/snapshots/")
#: placeholder of the case folder's path in error lines
TMP = "<tmp>"
#: texts of other libraries quoted in a message (pyarrow's, DuckDB's): they change with
#: the installed version, so the snapshot keeps only dispatchlab's words around them
LIBRARY_TEXT = (
    (re.compile(r"(cannot read Parquet: ).*$"), r"\1<pyarrow's text>"),
    (re.compile(r"(damaged \(truncated or corrupt: ).*?(\); it was left)"),
     r"\1<DuckDB's text>\2"),
)


def updating() -> bool:
    """Whether the tests should rewrite the snapshots (:data:`UPDATE_ENV` set)."""
    return os.environ.get(UPDATE_ENV, "") not in ("", "0")


# ------------------------------------------------------------------ help


def command_paths() -> list[tuple[str, ...]]:
    """Every command path of the CLI, the top (``()``) first, then depth first in
    the order of ``dispatchlab --help`` (each group's commands sorted by name)."""
    from dispatchlab.cli import app

    out: list[tuple[str, ...]] = []

    def walk(cmd: click.Command, path: tuple[str, ...]) -> None:
        out.append(path)
        if isinstance(cmd, click.Group):
            ctx = click.Context(cmd, info_name=path[-1] if path else "dispatchlab")
            for name in cmd.list_commands(ctx):
                sub = cmd.get_command(ctx, name)
                if sub is not None:
                    walk(sub, (*path, name))

    walk(app, ())
    return out


def help_file(path: tuple[str, ...]) -> Path:
    """The snapshot file of a command path (``campaign run`` ->
    ``help/dispatchlab_campaign_run.txt``)."""
    return HELP_DIR / ("_".join(("dispatchlab", *path)) + ".txt")


def help_text(path: tuple[str, ...]) -> str:
    """``dispatchlab PATH --help`` at :data:`WIDTH` columns, without colour."""
    from dispatchlab.cli import app

    result = CliRunner().invoke(app, [*path, "--help"], prog_name="dispatchlab",
                                terminal_width=WIDTH, color=False, catch_exceptions=False)
    if result.exit_code != 0:
        raise RuntimeError(f"dispatchlab {' '.join(path)} --help: exit status "
                           f"{result.exit_code}: {result.output}")
    return result.output


def write_help() -> list[Path]:
    """Rewrite every help snapshot (stale files of removed commands deleted)."""
    HELP_DIR.mkdir(parents=True, exist_ok=True)
    written = [help_file(p) for p in command_paths()]
    for stale in set(HELP_DIR.glob("*.txt")) - set(written):
        stale.unlink()
    for path, file in zip(command_paths(), written, strict=True):
        file.write_text(help_text(path), encoding="utf-8")
    return written


# ------------------------------------------------------------------ errors

Files = dict[str, object]


def _campaign_with(old: str, new: str) -> str:
    from test_bad_inputs import CAMPAIGN

    assert old in CAMPAIGN, old
    return CAMPAIGN.replace(old, new)


def error_cases() -> list[tuple[str, Files, list[str]]]:
    """(case id, files written in the case folder, command): the rows of
    ``test_bad_inputs.CASES`` and command-line mistakes. Every case also gets the
    tiny trace ``t.swf`` and the power file ``p.csv`` of that module."""
    from test_bad_inputs import CASES

    sim = ["simulate", "t.swf"]
    cli_cases: list[tuple[str, Files, list[str]]] = [
        ("cli-no-such-command", {}, ["simualte", "t.swf"]),
        ("cli-no-such-option", {}, [*sim, "--dispatch", "easy"]),
        ("cli-missing-trace", {}, ["simulate", "missing.swf"]),
        ("cli-unknown-dispatcher", {}, [*sim, "--dispatcher", "eassy"]),
        ("cli-unknown-predictor", {}, [*sim, "--predictor", "walltim"]),
        ("cli-unknown-parameter", {}, [*sim, "--dispatcher", "easy", "-D", "reservation=2"]),
        ("cli-bad-parameter-value", {}, [*sim, "--dispatcher", "easy", "-D",
                                         "reservations=many"]),
        ("cli-parameter-without-value", {}, [*sim, "--dispatcher", "easy", "-D",
                                             "reservations"]),
        ("cli-bad-overrun", {}, [*sim, "--overrun", "explode"]),
        ("campaign-missing-file", {}, ["campaign", "run", "missing.toml"]),
        ("campaign-unknown-key", {"c.toml": _campaign_with("tau = 10.0", "tua = 10.0")},
         ["campaign", "run", "c.toml"]),
        ("campaign-unknown-table", {"c.toml": _campaign_with("[[dispatchers]]",
                                                             "[[dispatcher]]")},
         ["campaign", "run", "c.toml"]),
        ("campaign-unknown-dispatcher", {"c.toml": _campaign_with('name = "fifo"',
                                                                  'name = "fifoo"')},
         ["campaign", "run", "c.toml"]),
    ]
    return [*((i, f, a) for i, f, a, _ in CASES), *cli_cases]


def _write(folder: Path, files: Files) -> None:
    from test_bad_inputs import POWER_CSV, TRACE

    for name, content in {"t.swf": TRACE, "p.csv": POWER_CSV, **files}.items():
        path = folder / name
        if callable(content):
            content(path)
        elif isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(str(content))


@contextlib.contextmanager
def _in_folder(folder: Path) -> Iterator[None]:
    old = Path.cwd()
    os.chdir(folder)
    try:
        yield
    finally:
        os.chdir(old)


def run_cli(argv: list[str], folder: Path) -> tuple[int, str]:
    """``dispatchlab ARGV`` in ``folder`` (in this process): exit status and stderr."""
    from dispatchlab.cli import allow_pandas, main

    err = io.StringIO()
    try:
        with _in_folder(folder), contextlib.redirect_stderr(err), \
                contextlib.redirect_stdout(io.StringIO()):
            rc = main(argv)
    finally:
        allow_pandas()  # main() hides pandas from the rest of this process otherwise
    return rc, err.getvalue()


def error_line(case: str, files: Files, argv: list[str], base: Path) -> str:
    """The snapshot line of one case: ``ID | STATUS | error: ...``, run in a new
    folder under ``base`` whose path becomes :data:`TMP`."""
    folder = base / case
    folder.mkdir(parents=True)
    _write(folder, files)
    rc, stderr = run_cli(argv, folder)
    lines = [ln for ln in stderr.splitlines() if not ln.startswith("note: ")]
    text = " / ".join(lines)  # one line, unless the bar is broken
    for p in {str(folder.resolve()), str(folder)}:
        text = text.replace(p, TMP)
    for pattern, replacement in LIBRARY_TEXT:
        text = pattern.sub(replacement, text)
    return f"{case} | {rc} | {text}"


def error_snapshot(base: Path) -> str:
    """The content of ``errors.txt``: one line per case of :func:`error_cases`."""
    header = ("# dispatchlab's error lines for bad inputs (tests/snapshots.py): "
              "case | exit status | stderr\n")
    return header + "".join(error_line(c, f, a, base) + "\n" for c, f, a in error_cases())


def write_errors() -> Path:
    """Rewrite ``errors.txt``."""
    with tempfile.TemporaryDirectory() as tmp:
        text = error_snapshot(Path(tmp))
    ERRORS_FILE.parent.mkdir(parents=True, exist_ok=True)
    ERRORS_FILE.write_text(text, encoding="utf-8")
    return ERRORS_FILE


def first_difference(expected: str, actual: str) -> str:
    """The first differing line of two texts, for a short failure message."""
    a, b = expected.splitlines(), actual.splitlines()
    for k, (x, y) in enumerate(zip(a, b, strict=False)):
        if x != y:
            return f"line {k + 1}: expected {x!r}, got {y!r}"
    return f"expected {len(a)} lines, got {len(b)}"


if __name__ == "__main__":
    from folders import add_to_sys_path

    add_to_sys_path()  # the error table's test modules (tests/cli/test_bad_inputs.py, ...)
    if sys.argv[1:] != ["--update"]:
        print("usage: python tests/snapshots.py --update  (rewrites tests/snapshots/)",
              file=sys.stderr)
        sys.exit(2)
    print(f"{len(write_help())} help snapshots in {HELP_DIR}")
    print(f"{len(error_cases())} error lines in {write_errors()}")


__all__ = ["command_paths", "error_cases", "error_snapshot", "help_file", "help_text"]
