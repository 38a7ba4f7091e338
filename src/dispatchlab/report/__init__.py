"""Presenting stored results: the HTML report of a campaign (:mod:`~dispatchlab.report.html`)
and the figures (:mod:`~dispatchlab.report.plots`, matplotlib).

``write_report`` is re-exported lazily (a module ``__getattr__``, as the package root
does): importing :mod:`~dispatchlab.report.plots` loads neither the HTML report nor the
campaign store it reads.
"""

from __future__ import annotations

from importlib import import_module
from typing import Any

__all__ = ["write_report"]


def __getattr__(name: str) -> Any:
    if name == "write_report":
        return import_module("dispatchlab.report.html").write_report
    raise AttributeError(f"module 'dispatchlab.report' has no attribute {name!r}")
