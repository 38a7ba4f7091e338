"""Workloads: the job table, trace readers/writers, cleaning and filters.

The cleaning functions are exported as ``clean_table`` and ``select_jobs`` (they are
``clean`` and ``select`` in :mod:`dispatchlab.workload.clean`; a package attribute
named ``clean`` would hide that submodule).
"""

import importlib

from dispatchlab.workload.clean import DEFAULT_REASONS, check_filters
from dispatchlab.workload.clean import clean as clean_table
from dispatchlab.workload.clean import select as select_jobs
from dispatchlab.workload.jobs import (
    ALL_FIELDS,
    DERIVED_FIELDS,
    FLOAT_FIELDS,
    SWF_FIELDS,
    JobTable,
    TraceInfo,
)
from dispatchlab.workload.load import (
    load_trace,
    render_trace_info,
    trace_format,
    trace_info,
)
from dispatchlab.workload.swf import SIM_FIELDS, read_swf, write_swf

# The Parquet/CSV functions need pyarrow (about 40 MB once imported): load it on first use.
_TABLE_FUNCTIONS = ("read_csv", "read_parquet", "read_table", "write_csv", "write_parquet")


def __getattr__(name: str):
    if name in _TABLE_FUNCTIONS:  # a lazy re-export, like the package root's
        return getattr(importlib.import_module("dispatchlab.workload.tables"), name)
    raise AttributeError(f"module 'dispatchlab.workload' has no attribute {name!r}")


__all__ = [
    "ALL_FIELDS",
    "DEFAULT_REASONS",
    "DERIVED_FIELDS",
    "FLOAT_FIELDS",
    "SIM_FIELDS",
    "SWF_FIELDS",
    "JobTable",
    "TraceInfo",
    "check_filters",
    "clean_table",
    "load_trace",
    "read_csv",
    "read_parquet",
    "read_swf",
    "read_table",
    "render_trace_info",
    "select_jobs",
    "trace_format",
    "trace_info",
    "write_csv",
    "write_parquet",
    "write_swf",
]
