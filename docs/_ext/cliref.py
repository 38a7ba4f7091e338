"""sphinx-click, told the names the command table gives its commands.

The top command group loads its subcommands lazily from
:data:`dispatchlab.cli.COMMANDS`, which sphinx-click reads through the group's
``list_commands`` and ``get_command``. A table entry may name a command under another
name than the command object's own (``predict-power`` is ``power predict``'s command,
named ``predict``); sphinx-click titles a command by its object's name, so that entry
would be shown as a second ``predict``. Each command is handed over as a copy carrying
the name it is called by.
"""

from __future__ import annotations

import copy
from typing import Any

import click
import sphinx_click.ext as sphinx_click_ext
from sphinx.application import Sphinx


def _named_commands(ctx: click.Context) -> dict[str, click.Command]:
    commands = {}
    group = ctx.command
    assert isinstance(group, click.Group)
    for name in group.list_commands(ctx):
        command = group.get_command(ctx, name)
        if command is None:
            continue
        if command.name != name:
            command = copy.copy(command)
            command.name = name
        commands[name] = command
    return commands


def setup(app: Sphinx) -> dict[str, Any]:
    sphinx_click_ext._get_lazyload_commands = _named_commands
    return {"parallel_read_safe": True, "version": "1"}
