"""The command line loads a command's module only when that command runs (issue 29: the
permitted function-body import of ``cli/``), while ``dispatchlab --help`` still lists
every command with its summary (the table :data:`dispatchlab.cli.COMMANDS`)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import click
import pytest

import dispatchlab.cli as app_module
from dispatchlab.cli import COMMANDS, app, load_command

#: what a command-line process loaded: the modules of dispatchlab.cli and whether numpy is
_PROBE = """
import json, sys
from dispatchlab.cli import main
rc = main({args!r})
print(json.dumps({{"rc": rc, "numpy": "numpy" in sys.modules,
                  "cli": sorted(m for m in sys.modules if m.startswith("dispatchlab.cli."))}}))
"""


def _loaded(*args: str) -> dict:
    done = subprocess.run([sys.executable, "-c", _PROBE.format(args=list(args))],
                          capture_output=True, text=True, check=True)
    return json.loads(done.stdout.splitlines()[-1])


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_the_table_matches_each_command(name: str) -> None:
    """The summary in the table is what click makes of the command's own help, at any
    width, so ``--help`` reads the same as with every module loaded."""
    command = load_command(name)
    assert not command.hidden and not command.deprecated and command.short_help is None
    listed = click.Command(name, help=COMMANDS[name][1])
    for limit in (20, 45, 60, 74, 10_000):
        assert listed.get_short_help_str(limit) == command.get_short_help_str(limit), limit


def test_every_command_module_is_in_the_table() -> None:
    """A new command module is reached through the table (or is a shared module)."""
    folder = Path(app_module.__file__).parent
    modules = {p.stem for p in folder.glob("*.py")} - {"__init__", "__main__", "common"}
    listed = {target.partition(":")[0].rpartition(".")[2] for target, _ in COMMANDS.values()}
    assert modules == listed
    ctx = click.Context(app, info_name="dispatchlab")
    assert app.list_commands(ctx) == sorted(COMMANDS)
    assert app.get_command(ctx, "predict-power") is load_command("power").commands["predict"]
    assert app.get_command(ctx, "simualte") is None


@pytest.mark.parametrize("args", [("--version",), ("--help",)])
def test_start_up_loads_no_command(args: tuple[str, ...]) -> None:
    loaded = _loaded(*args)
    assert loaded == {"rc": 0, "numpy": False, "cli": []}


def test_a_command_loads_only_its_module() -> None:
    loaded = _loaded("simulate", "--help")
    assert loaded["rc"] == 0
    assert loaded["cli"] == ["dispatchlab.cli.common", "dispatchlab.cli.simulate"]


def test_a_command_imports_numpy_before_its_module() -> None:
    """:func:`dispatchlab.cli.load_command` imports NumPy before the command's module, not
    at the bottom of its chain of imports (where NumPy's import-time calls made CPython
    3.11 map and unmap a frame-stack chunk at each call)."""
    probe = ("import sys\n"
             "order = []\n"
             "class Seen:\n"
             "    def find_spec(self, name, path, target=None):\n"
             "        order.append(name)\n"
             "sys.meta_path.insert(0, Seen())\n"
             "from dispatchlab.cli import load_command\n"
             "load_command('simulate')\n"
             "print(order.index('numpy') < order.index('dispatchlab.cli.simulate'))\n")
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                          check=True)
    assert done.stdout.split()[-1] == "True"
