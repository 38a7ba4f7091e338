"""Are two campaign results databases the same results? ``runs``, ``jobs`` and ``series``
compared both ways in DuckDB (``EXCEPT ALL``), leaving out what depends on the
machine, the moment or the code's hash rather than on the results.

For the layering work: run a campaign before and after a mechanical change, then::

    python tests/compare_stores.py before.duckdb after.duckdb

prints, per table, the rows found only in one file (exit status 0 when none, 1 when
some, 2 for a file that is not a results database). Importable:
:func:`compare_stores` returns the same as :class:`TableDifference` values.

Left out of ``runs`` (:data:`RUN_FIELDS_LEFT_OUT`): the wall-clock and execution
fields (``finished_at``, ``wall_seconds``, ``simulate_seconds``, ``worker``,
``peak_rss_mb``, ``attempts``), the wall-clock metrics
(:data:`dispatchlab.metrics.keys.WALL_CLOCK`: the decision times, ``finished``), the
code's identity (``version``, ``code_hash``, and ``run_key``, a hash that includes
the code hash) and the machine's paths (``trace_path``, ``inputs``: input file path
-> SHA-256; the contents stay compared through ``trace_sha256``). The ``summary``
JSON is compared without the same wall-clock keys and without ``trace`` (a file
trace's path). A run is then named by ``config_key`` (campaign name and
configuration, no code hash), ``workload`` (seed, slice) and ``repetition``; ``jobs``
and ``series`` rows are compared under that name instead of ``run_key``. An own
dispatcher class (``path/file.py:Class``) is named by its absolute path inside the
configuration, so compare databases made from the same folder.
"""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass
from pathlib import Path

import duckdb

from dispatchlab.metrics.keys import WALL_CLOCK

#: Keys of the summary JSON (and ``runs`` metric columns) measured on the wall clock.
WALL_CLOCK_KEYS: frozenset[str] = frozenset({*WALL_CLOCK, "simulate_seconds",
                                             "wall_seconds"})
#: ``runs`` columns that depend on the machine, the moment or the code hash.
RUN_FIELDS_LEFT_OUT: frozenset[str] = frozenset({
    *WALL_CLOCK_KEYS, "finished_at", "worker", "peak_rss_mb", "attempts",
    "version", "code_hash", "run_key", "trace_path", "inputs",
})
#: Summary keys left out besides the wall-clock ones.
SUMMARY_KEYS_LEFT_OUT: frozenset[str] = frozenset({"trace"})
#: What names a run without its code hash.
RUN_NAME = ("config_key", "workload", "repetition")
#: The tables compared (each must exist in both files).
TABLES = ("runs", "jobs", "series")


@dataclass(frozen=True)
class TableDifference:
    """Rows of one table found in one file and not in the other (as many times as
    they occur more often: ``EXCEPT ALL``), with up to ``limit`` of each as examples.
    ``columns`` are the compared columns."""

    table: str
    columns: tuple[str, ...]
    only_a: int
    only_b: int
    examples_a: list[tuple]
    examples_b: list[tuple]

    @property
    def same(self) -> bool:
        return self.only_a == 0 and self.only_b == 0


def _summary_without_wall_clock(text: str | None) -> str | None:
    """The summary JSON without the keys that are not results (canonical text)."""
    if text is None:
        return None
    summary = json.loads(text)
    drop = WALL_CLOCK_KEYS | SUMMARY_KEYS_LEFT_OUT
    return json.dumps({k: v for k, v in summary.items() if k not in drop}, sort_keys=True)


def _columns(con: duckdb.DuckDBPyConnection, db: str, table: str) -> list[str]:
    rows = con.execute(
        "SELECT column_name FROM information_schema.columns WHERE table_catalog = ? "
        "AND table_name = ? ORDER BY ordinal_position", [db, table]).fetchall()
    return [r[0] for r in rows]


def _select(table: str, db: str, columns: list[str]) -> str:
    """The SELECT of ``table`` in attached database ``db`` over the compared columns."""
    def col(prefix: str, name: str) -> str:
        if table == "runs" and name == "summary":
            return f'strip_summary(CAST({prefix}"summary" AS VARCHAR)) AS summary'
        return f'{prefix}"{name}"'

    if table == "runs":
        return f'SELECT {", ".join(col("", c) for c in columns)} FROM {db}.main.runs'
    name = ", ".join(f'r."{c}"' for c in RUN_NAME)
    return (f'SELECT {name}, {", ".join(col("t.", c) for c in columns)} '
            f"FROM {db}.main.{table} t LEFT JOIN {db}.main.runs r USING (run_key)")


def compare_stores(a: str | Path, b: str | Path, limit: int = 5) -> list[TableDifference]:
    """Compare the results of two campaign databases (see the module docstring); one
    :class:`TableDifference` per table of :data:`TABLES`. A table or a compared
    column missing from one file raises ``ValueError``."""
    con = duckdb.connect()
    try:
        con.create_function("strip_summary", _summary_without_wall_clock,
                            ["VARCHAR"], "VARCHAR", null_handling="special")
        for alias, path in (("a", a), ("b", b)):
            if not Path(path).is_file():
                raise ValueError(f"{path}: no such file")
            con.execute(f"ATTACH '{Path(path).as_posix()}' AS {alias} (READ_ONLY)")
        out = []
        for table in TABLES:
            cols_a, cols_b = _columns(con, "a", table), _columns(con, "b", table)
            if not cols_a or not cols_b:
                raise ValueError(f"table {table} missing from {a if not cols_a else b}")
            if set(cols_a) != set(cols_b):
                raise ValueError(f"table {table}: columns only in {a}: "
                                 f"{sorted(set(cols_a) - set(cols_b))}, only in {b}: "
                                 f"{sorted(set(cols_b) - set(cols_a))}")
            left_out = RUN_FIELDS_LEFT_OUT if table == "runs" else {"run_key"}
            columns = [c for c in cols_a if c not in left_out]
            sel_a, sel_b = _select(table, "a", columns), _select(table, "b", columns)
            diff = []
            for first, second in ((sel_a, sel_b), (sel_b, sel_a)):
                query = f"({first}) EXCEPT ALL ({second})"
                n = con.execute(f"SELECT count(*) FROM ({query})").fetchone()[0]
                examples = con.execute(f"SELECT * FROM ({query}) LIMIT {limit}").fetchall()
                diff.append((n, examples))
            names = (*RUN_NAME, *columns) if table != "runs" else tuple(columns)
            out.append(TableDifference(table, names, diff[0][0], diff[1][0],
                                       diff[0][1], diff[1][1]))
        return out
    finally:
        con.close()


def main(argv: list[str]) -> int:
    """The command: print the differences; status 0 same, 1 different, 2 bad use."""
    if len(argv) != 2:
        print("usage: python tests/compare_stores.py A.duckdb B.duckdb", file=sys.stderr)
        return 2
    try:
        diffs = compare_stores(*argv)
    except (ValueError, duckdb.Error) as exc:
        print(f"error: {' '.join(str(exc).split())}", file=sys.stderr)
        return 2
    for d in diffs:
        state = "same" if d.same else f"{d.only_a} rows only in A, {d.only_b} only in B"
        print(f"{d.table}: {state}")
        for side, rows in (("A", d.examples_a), ("B", d.examples_b)):
            for row in rows:
                shown = ", ".join(f"{c}={v!r}" for c, v in zip(d.columns, row, strict=True))
                print(f"  only in {side}: {shown[:400]}")
    return 0 if all(d.same for d in diffs) else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
