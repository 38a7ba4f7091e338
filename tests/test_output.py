"""Output outside a terminal (logs, pipes, ``| tee``): ``simulate``'s title and caption
at full width, ``COLUMNS`` respected."""

from __future__ import annotations

import os

from campaign_helpers import synthetic_trace
from test_cli import assert_ok, run_cli


def _env(**extra: str) -> dict[str, str]:
    """This process's environment without COLUMNS / LINES, plus ``extra``."""
    env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES")}
    env.update(extra)
    return env


# ---------------------------------------------------------------------- simulate
CAPTION = ("slowdown and bounded slowdown (bsld, tau = 10 s) are means over jobs; util: "
           "core utilization over the whole run; steady util: from the first time half "
           "the cores are busy to the last submission")


def test_simulate_off_a_terminal_is_not_squeezed_to_the_table(tmp_path):
    trace = synthetic_trace(tmp_path, 300, cores=64)
    proc = run_cli("simulate", trace, "--nodes", "4", "--cores-per-node", "16", env=_env())
    assert_ok(proc)
    lines = proc.stdout.splitlines()
    # the title and the caption are whole lines, not wrapped at the table's 40 columns
    assert lines[0].startswith(f"{trace.name} on ") and lines[1].startswith("┏")
    assert CAPTION in lines
    table = [line for line in lines if line[:1] in "┏┃┡│└"]
    assert len(table) > 10 and len({len(line) for line in table}) == 1
    # an explicit COLUMNS is the width: the caption wraps there
    narrow = run_cli("simulate", trace, "--nodes", "4", "--cores-per-node", "16",
                     env=_env(COLUMNS="60"))
    assert_ok(narrow)
    assert CAPTION not in narrow.stdout.splitlines()
    assert max(len(line) for line in narrow.stdout.splitlines()) <= 60
