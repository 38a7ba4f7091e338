"""Power caps: a step function of trace time giving the watts the running jobs' power
may use (or no cap).

A :class:`PowerCap` is a sorted tuple of steps ``(time, watts)``: from ``time`` (integer
seconds, the trace's time origin, as ``--window`` and ``--measure``) until the next
step the cap is ``watts`` (a float > 0) or ``None`` (no cap). Before the first step
there is no cap. Ways to build one:

* :meth:`PowerCap.window`: ``watts`` on the half-open window ``[t0, t1)`` (``t1`` None:
  to the end), none elsewhere (``--cap 0.5 --cap-window 0:10800``);
* :meth:`PowerCap.from_file`: PA-HPC-SIM's ``variable_power_caps`` format, one
  ``time;watts`` line per step (blank lines and ``#`` comments ignored);
* :func:`parse_cap_value`: ``"0.5"`` is a fraction of the platform's
  ``max_dynamic_power`` (in (0, 1]); ``"400000W"``, ``"400kW"``, ``"1.2MW"`` are watts.

The engine adds a dispatch pass at every step (an event of kind ``cap``).
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from dispatchlab.core.errors import InputError
from dispatchlab.core.limits import check_time

_UNITS = {"w": 1.0, "kw": 1e3, "mw": 1e6}


@dataclass(frozen=True)
class PowerCap:
    """Steps ``(time s, watts or None)``, strictly increasing in time."""

    steps: tuple[tuple[int, float | None], ...]

    def __post_init__(self) -> None:
        steps = tuple((int(t), None if w is None else float(w)) for t, w in self.steps)
        for k, (t, w) in enumerate(steps):
            if t < 0:
                raise InputError(f"a cap step at time {t} is before the trace origin",
                                 field="cap")
            if w is not None and not (w > 0 and math.isfinite(w)):
                raise InputError(f"a cap must be > 0 W, got {w!r} at time {t}", field="cap")
            if k and t <= steps[k - 1][0]:
                raise InputError(f"cap steps must be in increasing time order (time {t} "
                                 f"after {steps[k - 1][0]})", field="cap")
        object.__setattr__(self, "steps", steps)

    @classmethod
    def window(cls, watts: float, t0: int = 0, t1: int | None = None) -> PowerCap:
        """``watts`` on ``[t0, t1)`` (``t1`` None: until the end), no cap elsewhere."""
        if t1 is not None and t1 <= t0:
            raise InputError(f"the cap window ends ({t1}) at or before it starts ({t0})",
                             field="cap-window")
        steps: list[tuple[int, float | None]] = [(t0, watts)]
        if t1 is not None:
            steps.append((t1, None))
        return cls(tuple(steps))

    @classmethod
    def from_steps(cls, steps: Iterable[tuple[int, float | None]]) -> PowerCap:
        return cls(tuple(steps))

    @classmethod
    def from_file(cls, path: str | Path) -> PowerCap:
        """A ``time;watts`` step file (PA-HPC-SIM ``variable_power_caps``)."""
        path = Path(path)
        try:
            data = path.read_bytes()
        except OSError as exc:
            raise InputError(f"cannot read the cap schedule: {exc.strerror or exc}",
                             file=str(path)) from None
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as exc:
            line = data.count(b"\n", 0, exc.start) + 1
            raise InputError(f"not UTF-8 text (byte 0x{data[exc.start]:02x})",
                             file=str(path), line=line) from None
        steps: list[tuple[int, float | None]] = []
        for no, raw in enumerate(text.splitlines(), 1):
            line = raw.split("#", 1)[0].strip()
            if not line:
                continue
            parts = [p.strip() for p in line.split(";")]
            if len(parts) != 2:
                raise InputError(f"expected 'time;watts', got {raw.strip()!r}",
                                 file=str(path), line=no)
            if not re.fullmatch(r"[-+]?[0-9]+", parts[0]) or len(parts[0]) > 30:
                shown = parts[0] if len(parts[0]) <= 30 else parts[0][:27] + "..."
                raise InputError(f"time must be an integer of seconds below the engine's "
                                 f"limit, got {shown!r}", file=str(path), line=no,
                                 field="time")
            t = check_time(int(parts[0]), what="a step at time", file=str(path), line=no,
                           field="time")
            try:
                w = float(parts[1])
            except ValueError:
                raise InputError(f"watts must be a number, got {parts[1]!r}",
                                 file=str(path), line=no, field="watts") from None
            if not (w > 0 and math.isfinite(w)):
                raise InputError(f"watts must be > 0, got {parts[1]!r}", file=str(path),
                                 line=no, field="watts")
            if steps and t <= steps[-1][0]:
                raise InputError(f"times must increase (time {t} after {steps[-1][0]})",
                                 file=str(path), line=no, field="time")
            steps.append((t, w))
        if not steps:
            raise InputError("the cap schedule has no step", file=str(path))
        return cls(tuple(steps))

    def at(self, t: int) -> float | None:
        """The cap at time ``t`` (None: no cap)."""
        value: float | None = None
        for time, watts in self.steps:
            if time > t:
                break
            value = watts
        return value

    def describe(self, base: float | None = None) -> str:
        """``cap 1,280 W (5.0 % of 25,600 W) on [0, end)`` for a cap window (``base``:
        the platform's maximum dynamic power, None: no share shown), or the steps of a
        cap schedule (``cap schedule 0 s: 1,280 W, 3,600 s: none``)."""
        steps = list(self.steps)
        window = (len(steps) == 1 and steps[0][1] is not None) or (
            len(steps) == 2 and steps[0][1] is not None and steps[1][1] is None)
        if not window:
            return "cap schedule " + ", ".join(
                f"{t:,} s: {'none' if w is None else f'{w:,.0f} W'}" for t, w in steps)
        t0, watts = steps[0]
        share = f" ({100 * watts / base:.1f} % of {base:,.0f} W)" if base else ""
        end = f"{steps[1][0]:,}" if len(steps) == 2 else "end"
        return f"cap {watts:,.0f} W{share} on [{t0:,}, {end})"


def parse_cap_value(text: str, max_dynamic_power: float | None) -> float:
    """Watts from ``"0.5"`` (a fraction of ``max_dynamic_power``, in (0, 1]) or a value
    with a unit (``"400000W"``, ``"400kW"``, ``"1.2MW"``)."""
    raw = str(text).strip()
    m = re.fullmatch(r"([0-9]*\.?[0-9]+(?:[eE][-+]?[0-9]+)?)\s*([kKmM]?[wW])?", raw)
    if m is None:
        raise InputError(f"a cap is a fraction of the platform's maximum dynamic power "
                         f"(0.5) or watts with a unit (400kW), got {raw!r}", field="cap")
    value = float(m.group(1))
    if m.group(2):
        watts = value * _UNITS[m.group(2).lower()]
        if not watts > 0:
            raise InputError(f"a cap must be > 0 W, got {raw!r}", field="cap")
        return watts
    if not 0 < value <= 1:
        raise InputError(f"a cap given as a fraction must be in (0, 1], got {raw!r} (watts "
                         "need a unit: 400kW)", field="cap")
    if not max_dynamic_power:
        raise InputError("a cap as a fraction needs the platform's max_dynamic_power (give "
                         "it in watts instead: 400kW)", field="cap")
    return value * float(max_dynamic_power)


def parse_window(text: str) -> tuple[int, int | None]:
    """``T0:T1`` (``T1`` may be left open) -> (t0, t1)."""
    head, sep, tail = str(text).partition(":")
    try:
        t0 = int(head) if head.strip() else 0
        t1 = int(tail) if tail.strip() else None
    except ValueError:
        raise InputError(f"expected T0:T1 in integer seconds, got {text!r}",
                         field="cap-window") from None
    if not sep:
        raise InputError(f"expected T0:T1, got {text!r}", field="cap-window")
    if t0 < 0 or (t1 is not None and t1 <= t0):
        raise InputError(f"the window needs 0 <= T0 < T1, got {text!r}", field="cap-window")
    return t0, t1
