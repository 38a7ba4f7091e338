"""Presenting stored results: the HTML report of a campaign (:mod:`~dispatchlab.report.html`),
the figures (:mod:`~dispatchlab.report.plots`, matplotlib) and the files and figures of
the prediction study (:mod:`~dispatchlab.report.study`) and of the duration predictors'
accuracy (:mod:`~dispatchlab.report.duration_accuracy`), drawn from the data
:mod:`dispatchlab.experiment` returns.

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
