"""The validation of one run's campaign values, shared by the up-front check and the run.

:func:`validate_run` is called twice with the same run spec
(:func:`dispatchlab.experiment.campaign.config.load_campaign`'s layout): by ``load_campaign`` for
every run before anything executes (a failure names the campaign file and the run) and
by :func:`dispatchlab.experiment.campaign.worker.execute_run` before it simulates. So a value that
would fail every run (``seeds = [99999999999999999999]``, ``cores =
99999999999999999999``) refuses the campaign up front instead of failing each run.
It checks what a :class:`~dispatchlab.run.config.RunConfig` does not hold (the seed,
the platform entry); the run configuration's own values (tau, the measured jobs, the
components, hot start, overrun, ``max_wall``) are checked once per run by
:func:`dispatchlab.run.build.build` (:meth:`RunConfig.validate`), and at load time by
the campaign file's checks of each key. **One place**: a new run-level check of a
campaign value goes here, and both callers get it.
"""

from __future__ import annotations

import json
from typing import Any

from dispatchlab.core.errors import InputError
from dispatchlab.platform.choose import platform_for

#: seeds are stored as DuckDB BIGINT and seed numpy generators (which refuse negatives)
SEED_LIMIT = 1 << 63


def validate_run(spec: dict[str, Any], memo: dict[str, Any] | None = None) -> None:
    """An :class:`InputError` (field: the campaign key at fault) unless the run spec's
    values can run: the seed an integer in ``0 .. 2**63 - 1``, the platform (pooled
    cores, nodes x cores per node, a preset or a file) buildable within the platform
    bounds (:data:`~dispatchlab.platform.platform.MAX_NODES`,
    :data:`~dispatchlab.platform.platform.MAX_CAPACITY`). ``memo`` (a dict kept across
    calls) skips platforms already built."""

    seed = spec["seed"]
    if isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed < SEED_LIMIT:
        shown = seed if not isinstance(seed, int) or abs(seed) < 10**30 else "huge"
        raise InputError(f"a seed must be an integer from 0 to {SEED_LIMIT - 1}, got "
                         f"{shown!r}", field="seeds")
    platform = spec["platform"]
    spec_only = {k: v for k, v in platform.items() if k not in ("label", "allocator")}
    if spec_only and "from_trace" not in spec_only:
        key = json.dumps(spec_only, sort_keys=True, default=str)
        if memo is None or key not in memo:
            try:
                platform_for(spec_only, None, advice="")
            except InputError as exc:
                where = f"platform {platform.get('label', '')!r}".replace(" ''", "")
                shown = exc.message if exc.file is None else str(exc)
                raise InputError(f"{where}: {shown}", field="platforms") from None
            if memo is not None:
                memo[key] = True
