"""The figure of ``dispatchlab validate``: the recorded and the simulated 14-day rolling
mean wait over time (:func:`dispatchlab.metrics.validation.rolling_wait_mape`).

Built directly as a :class:`matplotlib.figure.Figure` (no pyplot, no backend choice),
as every figure of :mod:`dispatchlab.report.plots`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from dispatchlab.core.errors import InputError

if TYPE_CHECKING:  # matplotlib is imported when a figure is drawn
    from matplotlib.figure import Figure

    from dispatchlab.metrics.validation import RollingWaits

__all__ = ["rolling_waits_figure"]


def rolling_waits_figure(rolling: RollingWaits, *, title: str,
                         start_epoch: int | None = None) -> Figure:
    """Two lines over the hourly points: the recorded and the simulated rolling mean
    wait (hours), with gaps where a window holds no job; the points the MAPE leaves
    out (recorded mean 0) are drawn but shaded. The x axis is the date when
    ``start_epoch`` (the trace's Unix start time, UTC) is given, else days on the
    trace's time axis. The legend gives the MAPE."""
    from matplotlib.figure import Figure

    if not (rolling.jobs > 0).any():
        raise InputError(f"no rolling-mean point to draw: no {rolling.window / 86400:g}-day "
                         "window ending at a whole hour after the first full one holds a "
                         "compared job (the jobs span less than the window)")
    fig = Figure(figsize=(10.5, 4.2), layout="constrained")
    ax = fig.subplots()
    x: np.ndarray
    if start_epoch is not None:
        x = (np.datetime64(int(start_epoch), "s") + rolling.hours.astype("timedelta64[s]"))
        ax.set_xlabel("date (UTC)")
    else:
        x = rolling.hours / 86400.0
        ax.set_xlabel("days (trace time)")
    ax.plot(x, rolling.recorded / 3600.0, color="#1f77b4", linewidth=1.2,
            label="recorded (the log)")
    ax.plot(x, rolling.simulated / 3600.0, color="#ff7f0e", linewidth=1.2,
            label="simulated")
    left_out = (rolling.jobs > 0) & ~rolling.used
    if left_out.any():
        y_top = float(np.nanmax(np.r_[rolling.recorded, rolling.simulated, 0.0])) / 3600.0
        ax.fill_between(x, 0, y_top or 1.0, where=left_out, color="#7f7f7f", alpha=0.15,
                        step="mid", label="left out (recorded mean 0)")
    mape = "n/a" if rolling.mape is None else f"{rolling.mape:.1f} %"
    ax.set_ylabel(f"{rolling.window / 86400:g}-day rolling mean wait (h)")
    ax.set_title(f"{title}\nMAPE of the hourly rolling means: {mape}")
    ax.grid(alpha=0.3)
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False)
    if start_epoch is not None:
        fig.autofmt_xdate()
    return fig
