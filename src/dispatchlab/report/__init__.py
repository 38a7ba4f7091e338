"""Presenting stored results: the HTML report of a campaign (:mod:`~dispatchlab.report.html`)
and the figures (:mod:`~dispatchlab.report.plots`, matplotlib)."""

from dispatchlab.report.html import write_report

__all__ = ["write_report"]
