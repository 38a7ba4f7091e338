"""The files and figures of a duration-predictor evaluation, drawn from a
:class:`~dispatchlab.experiment.duration_accuracy.PredictionReport` (the data
:func:`~dispatchlab.experiment.duration_accuracy.evaluate_predictors` returns; this module
only presents it).

Files (:func:`write_prediction_report`, ``dispatchlab predict --out DIR``):
``predictions.parquet`` (one row per job and predictor), ``prediction_errors.png``
(absolute-error distribution beside the signed-error CDF), ``prediction_vs_actual.png``
(predicted against actual run time, one panel per predictor) and
``prediction_summary.json`` (:meth:`~dispatchlab.experiment.duration_accuracy.
PredictionReport.summary` plus ``"files"``).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from dispatchlab.experiment.duration_accuracy import PredictionReport
from dispatchlab.report import plots
from dispatchlab.workload.tables import local_sink

if TYPE_CHECKING:  # matplotlib is imported by the functions that draw (not on import)
    from matplotlib.figure import Figure

#: figure files :func:`write_prediction_report` writes, in order
FIGURE_FILES: tuple[str, ...] = ("prediction_errors.png", "prediction_vs_actual.png")


def _labelled(report: PredictionReport) -> tuple[dict[str, np.ndarray], dict[str, str]]:
    """Predictions keyed by legend label ``"name (MAE x min)"`` and the label ->
    predictor-name groups (colours follow the predictor, in report order)."""
    preds, groups = {}, {}
    for name, p in report.predicted.items():
        mae = report.metrics[name]["all"]["mae_min"]
        label = name if mae is None else f"{name} (MAE {mae:,.0f} min)"
        preds[label] = p
        groups[label] = name
    return preds, groups


def _title(report: PredictionReport, what: str) -> str:
    title = f"{what}: {Path(report.source).name}, {len(report):,} jobs"
    if report.wait_missing:
        title += " (no waits in trace: replayed with wait 0)"
    return title


def prediction_figures(report: PredictionReport) -> dict[str, Figure]:
    """The report's figures by file name (:data:`FIGURE_FILES`), one line / panel per
    predictor, coloured by predictor:

    - ``prediction_errors.png`` (:func:`dispatchlab.report.plots.prediction_error_curves`):
      the absolute error distribution (minutes, log x axis, error 0 drawn at 1 s, like
      Galleguillos et al. 2017 Figure 2) beside the cumulative distribution of the signed error
      predicted - actual (symmetric log axis: left of 0, underestimates);
    - ``prediction_vs_actual.png`` (:func:`dispatchlab.report.plots.predicted_vs_actual`):
      predicted against actual run time per predictor (log-log, diagonal = exact, a
      uniform sample of at most :data:`dispatchlab.report.plots.SCATTER_MAX_POINTS` jobs).

    A predictor exact on every job (``real``) is drawn but does not set the axis
    limits, and the titles name it."""

    preds, groups = _labelled(report)
    return {
        "prediction_errors.png": plots.prediction_error_curves(
            preds, report.actual, groups=groups, title=_title(report, "prediction errors")),
        "prediction_vs_actual.png": plots.predicted_vs_actual(
            preds, report.actual, groups=groups,
            title=_title(report, "predicted vs actual run time")),
    }


def plot_prediction_errors(report: PredictionReport, path: str | Path) -> None:
    """Write the error distributions (``prediction_errors.png`` of
    :func:`prediction_figures`: absolute and signed error, one line per predictor) to
    ``path`` (PNG, 120 dpi)."""

    preds, groups = _labelled(report)
    plots.prediction_error_curves(preds, report.actual, groups=groups,
                                  title=_title(report, "prediction errors")
                                  ).savefig(path, dpi=120)


def write_prediction_report(report: PredictionReport, out_dir: str | Path) -> dict[str, Any]:
    """Write ``predictions.parquet``
    (:meth:`~dispatchlab.experiment.duration_accuracy.PredictionReport.to_arrow`), the
    :func:`prediction_figures` (``prediction_errors.png``, ``prediction_vs_actual.png``)
    and ``prediction_summary.json`` into ``out_dir`` (created if needed); return the
    summary, which (in the JSON too) gains ``"files"``: the names of every file written,
    in that order."""
    import pyarrow.parquet as pq

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)

    with local_sink(out / "predictions.parquet") as sink:
        pq.write_table(report.to_arrow(), sink)
    for name, fig in prediction_figures(report).items():
        fig.savefig(out / name, dpi=120)
    summary = report.summary()
    summary["files"] = ["predictions.parquet", *FIGURE_FILES, "prediction_summary.json"]
    (out / "prediction_summary.json").write_text(json.dumps(summary, indent=2) + "\n")
    return summary
