"""The ``dispatchlab`` command line (thin: parsing, then calls into the library).

One module per command group, all registered here:

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

Imports point one way: command modules import ``common``, this package imports the
command modules. Every user mistake ends with exactly one ``error: ...`` line on stderr
and exit status 2 (no traceback); see :class:`dispatchlab.core.errors.InputError`. A
dispatcher that breaks the engine's rules (:class:`~dispatchlab.dispatch.base.
DispatchError`, a bug in its code) ends with one ``error: ...`` line and status 1, or
its traceback with ``DISPATCHLAB_TRACEBACK=1``.
"""

from __future__ import annotations

import os
import sys

import click

from dispatchlab.cli.campaign import campaign_app
from dispatchlab.cli.compare import compare
from dispatchlab.cli.convert import convert
from dispatchlab.cli.demo import demo
from dispatchlab.cli.generate import generate
from dispatchlab.cli.l2r import l2r_app
from dispatchlab.cli.platform import platform_app
from dispatchlab.cli.power import power_app
from dispatchlab.cli.predict import predict
from dispatchlab.cli.report import report
from dispatchlab.cli.results import results_app
from dispatchlab.cli.simulate import simulate
from dispatchlab.cli.study import study_app
from dispatchlab.cli.trace import trace_app
from dispatchlab.cli.validate import validate
from dispatchlab.core.errors import InputError
from dispatchlab.core.suggest import did_you_mean
from dispatchlab.dispatch.base import DispatchError

#: set to 1 to see the traceback of a dispatcher's protocol break (a bug in its code)
TRACEBACK_ENV = "DISPATCHLAB_TRACEBACK"


class _Group(click.Group):
    """A group that suggests the nearest command for a typo (``simualte``)."""

    def resolve_command(self, ctx, args):
        name = args[0] if args else None
        if name is not None and not name.startswith("-") and self.get_command(ctx, name) is None:
            raise InputError(f"no such command {name!r}"
                             + did_you_mean(name, self.list_commands(ctx))
                             + f" (commands: {', '.join(self.list_commands(ctx))})")
        return super().resolve_command(ctx, args)


@click.group(cls=_Group, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="dispatchlab")
def app() -> None:
    """Simulate an HPC workload manager on real traces: dispatchers, predictors, metrics."""


for command in (simulate, compare, predict, study_app, trace_app, generate, convert,
                platform_app, demo, campaign_app, results_app, report, l2r_app,
                power_app, validate):
    app.add_command(command)
# the spelling of ``dispatchlab power predict`` (the same command)
app.add_command(power_app.commands["predict"], name="predict-power")


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


def main(argv: list[str] | None = None) -> int:
    """Entry point: run the CLI, turning user mistakes into one line on stderr."""
    _hide_pandas_from_pyarrow()
    try:
        rc = app.main(args=argv, prog_name="dispatchlab", standalone_mode=False)
    except InputError as exc:
        # one line whatever the message quotes (a parser's multi-line text)
        print("error: " + " ".join(str(exc).splitlines()), file=sys.stderr)
        return 2
    except DispatchError as exc:
        # a dispatcher's decision the engine cannot apply: a bug in the dispatcher's
        # code, not in the input (exit status 1); the traceback on request
        if os.environ.get(TRACEBACK_ENV, "") not in ("", "0"):
            raise
        print(f"error: the dispatcher broke the engine's rules (a bug in its code; "
              f"{TRACEBACK_ENV}=1 shows where): {exc}", file=sys.stderr)
        return 1
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
    return rc if isinstance(rc, int) else 0


__all__ = ["app", "main"]
