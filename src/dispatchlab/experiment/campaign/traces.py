"""A campaign's trace file entries read into job tables: the file as read, the table
cleaned with the entry's drop filters (no selection), and the cleaned length that slices
are planned on.

Both sides of a campaign use it: the configuration (:mod:`~dispatchlab.experiment.
campaign.config`) plans slices on :func:`cleaned_length` when it expands a file, and the
worker (:mod:`~dispatchlab.experiment.campaign.worker`) selects each run's jobs from
:func:`cleaned_table`, so both read a trace the same way. Tables are cached per process
(the last :data:`CACHE_SIZE` tables: a file as read and as cleaned), so the many runs of
a campaign on one trace read and clean it once per worker.
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Any

from dispatchlab.workload.clean import clean
from dispatchlab.workload.load import load_trace

#: Trace tables kept in memory per process (raw and cleaned, so one trace holds two
#: entries).
CACHE_SIZE = 4
_cache: OrderedDict[tuple, Any] = OrderedDict()


def cached(key: tuple, make):
    """The value cached under ``key``, made by ``make()`` (and cached) when absent; the
    least recently used entry goes beyond :data:`CACHE_SIZE`."""
    if key in _cache:
        _cache.move_to_end(key)
        return _cache[key]
    value = make()
    _cache[key] = value
    while len(_cache) > CACHE_SIZE:
        _cache.popitem(last=False)
    return value


def read_table(trace: dict[str, Any], cache: bool = True):
    """The trace file as read (no cleaning), cached unless ``cache`` is false."""

    lenient = bool(trace.get("lenient", False))
    extra = trace.get("extra_fields", "error")
    fmt = trace.get("format")
    options = {k: trace[k] for k in ("submit_from", "timezone", "columns", "unstarted",
                                     "running") if k in trace}

    def read():
        return load_trace(trace["path"], lenient=lenient, extra_fields=extra, clean=False,
                          format=fmt, reader_options=options)

    key = ("read", trace["path"], lenient, extra, fmt, repr(sorted(options.items())))
    return cached(key, read) if cache else read()


def cleaned_table(trace: dict[str, Any], raw, cache: bool = True):
    """Default cleaning and the entry's drop filters (no selection)."""

    drop_overrun = bool(trace.get("drop_overrun", False))
    max_procs = True if trace.get("max_procs") else None

    def make():
        return clean(raw, copy=True, drop_overrun=drop_overrun, max_procs=max_procs)

    if not cache:
        return make()
    key = ("clean", trace["path"], bool(trace.get("lenient", False)),
           trace.get("extra_fields", "error"), drop_overrun, max_procs)
    return cached(key, make)


def cleaned_length(trace: dict[str, Any]) -> int:
    """Jobs of a trace file entry after reading and cleaning, before any selection
    (what slices are planned on). Nothing is cached."""
    return len(cleaned_table(trace, read_table(trace, cache=False), cache=False))
