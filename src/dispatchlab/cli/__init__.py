"""The ``dispatchlab`` command line (thin: parsing, then calls into the library).

One module per command group, each loaded only when one of its commands runs or shows its
help (:data:`COMMANDS`: ``dispatchlab --version`` and ``dispatchlab --help`` load none):

- :mod:`~dispatchlab.cli.simulate`: ``simulate``, ``demo``;
- :mod:`~dispatchlab.cli.compare`: ``compare`` (several dispatchers on one trace, with
  statistics over slices);
- :mod:`~dispatchlab.cli.predict`: ``predict``;
- :mod:`~dispatchlab.cli.study`: ``study predictions``;
- :mod:`~dispatchlab.cli.trace`: ``trace info``, ``generate``, ``convert``;
- :mod:`~dispatchlab.cli.platform`: ``platform infer``;
- :mod:`~dispatchlab.cli.campaign`: ``campaign run|status``;
- :mod:`~dispatchlab.cli.validate`: ``validate`` (a run against the recorded schedule);
- :mod:`~dispatchlab.cli.results`: ``results query|export|summary``, ``report``;
- :mod:`~dispatchlab.cli.common`: what they share (option groups, parsing, tables).

Imports point one way: command modules import ``common``, this package loads the
command modules by name. Every user mistake ends with exactly one ``error: ...`` line on stderr
and exit status 2 (no traceback); see :class:`dispatchlab.core.errors.InputError`. A
dispatcher that breaks the engine's rules (:class:`~dispatchlab.dispatch.base.
DispatchError`, a bug in its code) ends with one ``error: ...`` line and status 1, or
its traceback with ``DISPATCHLAB_TRACEBACK=1``; so does a panic or a broken rule in the
native core (:class:`~dispatchlab.sim.native.NativeCoreError`, a bug in dispatchlab),
with the core's message. The ``dispatchlab`` program is :func:`run` (:func:`main`, then
the exit; after ``simulate`` without the interpreter's teardown).
"""

from __future__ import annotations

import gc
import importlib
import os
import sys

import click

from dispatchlab.core.errors import InputError
from dispatchlab.core.suggest import did_you_mean

#: set to 1 to see the traceback of a dispatcher's protocol break (a bug in its code) or
#: of a failure of the native core
TRACEBACK_ENV = "DISPATCHLAB_TRACEBACK"

#: The commands: name -> (``"module:attribute"`` of its click command, its summary as
#: ``dispatchlab --help`` lists it: the first sentence of the command's help, which
#: ``tests/cli/test_lazy_commands.py`` checks). The module is imported when the command
#: runs or shows its help, so start-up loads only the command used.
COMMANDS: dict[str, tuple[str, str]] = {
    "campaign": ("dispatchlab.cli.campaign:campaign_app",
                 "Run many simulations declared in a TOML campaign file."),
    "compare": ("dispatchlab.cli.compare:compare",
                "Simulate TRACE under several dispatchers (x predictors) and print one table."),
    "convert": ("dispatchlab.cli.convert:convert",
                "Convert TRACE (any format: swf, alea, sacct, pbs, parquet, csv) to SWF, "
                "Parquet or CSV."),
    "demo": ("dispatchlab.cli.demo:demo",
             "Generate a synthetic workload and compare FIFO, SJF, EASY and conservative on it."),
    "generate": ("dispatchlab.cli.generate:generate",
                 "Write a synthetic SWF trace: fitted to a real trace (--like) or from the "
                 "Lublin & Feitelson (2003) parametric model (--model lublin)."),
    "l2r": ("dispatchlab.cli.l2r:l2r_app",
            "Learning to rank the EASY queue (Darrous, learning-to-rank report): train a "
            "ranker, evaluate it."),
    "platform": ("dispatchlab.cli.platform:platform_app",
                 "Platforms: propose one from a trace, show one as read."),
    "power": ("dispatchlab.cli.power:power_app",
              "Job power data: synthesize it for traces that have none."),
    "predict": ("dispatchlab.cli.predict:predict",
                "Score duration predictors on TRACE's recorded schedule (no dispatcher)."),
    # the spelling of ``dispatchlab power predict`` (the same command)
    "predict-power": ("dispatchlab.cli.power:predict_cmd",
                      "Score power predictors on TRACE's recorded schedule (predicted at "
                      "submission, learning from jobs at their recorded end), as "
                      "Carastan-Santos et al."),
    "report": ("dispatchlab.cli.report:report",
               "Write a self-contained HTML report (figures and tables) of DB's runs."),
    "results": ("dispatchlab.cli.results:results_app",
                "Query and export a results database."),
    "simulate": ("dispatchlab.cli.simulate:simulate",
                 "Simulate TRACE under one dispatcher and predictor; print and write the "
                 "results."),
    "study": ("dispatchlab.cli.study:study_app",
              "Experiments over many simulations of one trace."),
    "trace": ("dispatchlab.cli.trace:trace_app", "Inspect workload traces."),
    "validate": ("dispatchlab.cli.validate:validate",
                 "Simulate TRACE and compare each job's simulated wait with the wait the log "
                 "recorded: the error distribution, mean absolute error, correlations and "
                 "mean waits, overall and per partition or queue, and the MAPE between the "
                 "recorded and simulated 14-day rolling mean waits over hourly points "
                 "(Wilkinson et al."),
}


def load_command(name: str) -> click.Command:
    """The click command of ``name`` (a key of :data:`COMMANDS`), importing its module.

    NumPy, which every command's module imports, is imported first, from here: imported
    at the bottom of a command's chain of imports, its few hundred import-time calls
    (``numpy._core._add_newdocs``) straddled the end of one of CPython 3.11's 16 KiB
    frame-stack chunks, which was then mapped and unmapped at each call (524 ``mmap`` /
    ``munmap`` pairs per ``simulate``, 7 this way)."""
    module, _, attr = COMMANDS[name][0].partition(":")
    import numpy  # noqa: F401  # see above: before the command's module

    command = getattr(importlib.import_module(module), attr)
    assert isinstance(command, click.Command), COMMANDS[name][0]
    return command


class _Group(click.Group):
    """The top group: its commands come from :data:`COMMANDS`, each module imported when
    its command is resolved; ``--help`` lists the table's summaries without importing any;
    a typo gets the nearest command (``simualte``)."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(COMMANDS)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        return load_command(cmd_name) if cmd_name in COMMANDS else None

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        """The "Commands" section of ``--help``, as :class:`click.Group` writes it, from
        the summaries of :data:`COMMANDS` (shortened by click's own rule)."""
        names = self.list_commands(ctx)
        limit = formatter.width - 6 - max(len(n) for n in names)
        rows = [(n, click.Command(n, help=COMMANDS[n][1]).get_short_help_str(limit))
                for n in names]
        with formatter.section("Commands"):
            formatter.write_dl(rows)

    def resolve_command(self, ctx, args):
        name = args[0] if args else None
        if name is not None and not name.startswith("-") and name not in COMMANDS:
            raise InputError(f"no such command {name!r}"
                             + did_you_mean(name, self.list_commands(ctx))
                             + f" (commands: {', '.join(self.list_commands(ctx))})")
        resolved = super().resolve_command(ctx, args)
        _RESOLVED[0] = resolved[0]
        if _FREEZE_LOADED[0]:
            # the command's modules are loaded and live as long as the process: the
            # garbage collections of the run (release_free_memory's, the automatic
            # ones) skip their objects; main() unfreezes them when the command ends
            gc.freeze()
        return resolved


#: Whether resolving a command freezes the objects loaded so far (:func:`gc.freeze`):
#: set by :func:`main` for the duration of a command, which unfreezes them at its end.
_FREEZE_LOADED = [False]


@click.group(cls=_Group, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="dispatchlab")
def app() -> None:
    """Simulate an HPC workload manager on real traces: dispatchers, predictors, metrics."""


def _hide_pandas_from_pyarrow() -> None:
    """pyarrow looks for pandas at its first array conversion and imports it when it is
    installed (OR-Tools depends on pandas, so it is): 0.4 s and 40 MB more for every
    command, though dispatchlab never uses pandas. A command process marks pandas as
    absent (unless something imported it already); the CP dispatchers, whose OR-Tools
    imports pandas, lift the mark (:mod:`dispatchlab.dispatch.cp`). Optional users of
    pandas (lightgbm, scikit-learn, Dask) treat it as not installed."""
    if "pandas" not in sys.modules and not any(isinstance(f, PandasBlocker)
                                               for f in sys.meta_path):
        sys.meta_path.insert(0, PandasBlocker())


class PandasBlocker:
    """A module finder that reports pandas as not installed (see
    :func:`_hide_pandas_from_pyarrow`); removed by :func:`allow_pandas`."""

    def find_spec(self, name: str, path=None, target=None):
        if name == "pandas" or name.startswith("pandas."):
            raise ModuleNotFoundError(f"No module named {name!r} (hidden by dispatchlab's "
                                      "command line)", name=name)
        return None


def allow_pandas() -> None:
    """Lift :func:`_hide_pandas_from_pyarrow`'s mark (OR-Tools needs pandas)."""
    sys.meta_path[:] = [f for f in sys.meta_path if not isinstance(f, PandasBlocker)]


#: The name of the command the last :func:`main` resolved (None: none, e.g. --help).
_RESOLVED: list[str | None] = [None]

#: The commands after which :func:`run` ends the process without the interpreter's
#: teardown: they have written and closed everything they make by the time they
#: return (files, the printed tables), and the teardown of every loaded module
#: (numpy, pyarrow, rich, ...) costs about 30 ms, a tenth of a short ``simulate``.
FAST_EXIT = frozenset({"simulate"})


def run() -> None:
    """The ``dispatchlab`` program (and ``python -m dispatchlab.cli``): :func:`main`,
    then exit with its status. After a command of :data:`FAST_EXIT` that returned
    (any status), standard output and error are flushed and the process ends at once
    (:func:`os._exit`); otherwise, or when a flush fails (a closed pipe), the usual
    :func:`sys.exit`."""
    _RESOLVED[0] = None
    rc = main()
    if _RESOLVED[0] in FAST_EXIT:
        try:
            sys.stdout.flush()
            sys.stderr.flush()
        except OSError:
            sys.exit(rc)  # the usual teardown reports it
        os._exit(rc)
    sys.exit(rc)


def main(argv: list[str] | None = None) -> int:
    """Entry point: run the CLI, turning user mistakes into one line on stderr."""
    _hide_pandas_from_pyarrow()
    _FREEZE_LOADED[0] = True
    try:
        rc = app.main(args=argv, prog_name="dispatchlab", standalone_mode=False)
    except InputError as exc:
        # one line whatever the message quotes (a parser's multi-line text)
        print("error: " + " ".join(str(exc).splitlines()), file=sys.stderr)
        return 2
    except click.exceptions.NoArgsIsHelpError as exc:
        print(exc.ctx.get_help() if exc.ctx is not None else "dispatchlab --help")
        return 0
    except click.ClickException as exc:
        print(f"error: {exc.format_message()}", file=sys.stderr)
        return 2
    except click.exceptions.Abort:
        print("error: aborted", file=sys.stderr)
        return 130
    except KeyboardInterrupt:
        print("error: interrupted", file=sys.stderr)
        return 130
    except RuntimeError as exc:
        if _is_native_core_error(exc):
            # a panic or a broken rule in the compiled core: a bug in dispatchlab
            if os.environ.get(TRACEBACK_ENV, "") not in ("", "0"):
                raise
            print(f"error: the native core failed (a bug in dispatchlab; {TRACEBACK_ENV}=1 "
                  f"shows where; --engine python avoids it): "
                  + " ".join(str(exc).splitlines()), file=sys.stderr)
            return 1
        if not _is_dispatch_error(exc):
            raise
        # a dispatcher's decision the engine cannot apply: a bug in the dispatcher's
        # code, not in the input (exit status 1); the traceback on request
        if os.environ.get(TRACEBACK_ENV, "") not in ("", "0"):
            raise
        print(f"error: the dispatcher broke the engine's rules (a bug in its code; "
              f"{TRACEBACK_ENV}=1 shows where): {exc}", file=sys.stderr)
        return 1
    finally:  # the objects frozen when the command was resolved (_Group.resolve_command)
        _FREEZE_LOADED[0] = False
        gc.unfreeze()
    return rc if isinstance(rc, int) else 0


def _is_dispatch_error(exc: BaseException) -> bool:
    """Whether ``exc`` is a :class:`~dispatchlab.dispatch.base.DispatchError`. Only a
    command that loaded the dispatchers can raise one, so the class is looked up among
    the loaded modules (a command that never simulates does not import them)."""
    base = sys.modules.get("dispatchlab.dispatch.base")
    return base is not None and isinstance(exc, base.DispatchError)


def _is_native_core_error(exc: BaseException) -> bool:
    """Whether ``exc`` is a :class:`~dispatchlab.sim.native.NativeCoreError` (looked up
    among the loaded modules, as :func:`_is_dispatch_error`)."""
    native = sys.modules.get("dispatchlab.sim.native")
    return native is not None and isinstance(exc, native.NativeCoreError)


__all__ = ["app", "main", "run"]
