"""Cutting a trace into training lists and a test part, as the paper's ``split_swf``.

The seed (Darrous, predictsim ``swf_utils.split_swf``) keeps the file order (no
shuffling: the lists must stay consecutive so that each one is a plausible stretch of
the system's life), takes ``train_n = int(len(jobs) * 0.7)`` jobs for training, cuts
them into ``K`` consecutive lists of ``part = train_n // K`` jobs each, and gives
**everything from row** ``part * K`` **on** to the test part. The rows
``[part * K, train_n)`` that do not fill a whole list therefore move to the test part,
which is slightly more than 30 % of the trace. Each list and the test part are later
simulated alone, each starting from an empty machine.
"""

from __future__ import annotations

from typing import NamedTuple

from dispatchlab.core.errors import InputError

#: the paper's training fraction (``training_percentage`` in predictsim's ``conf.py``)
TRAIN_FRACTION = 0.7


class Split(NamedTuple):
    """The row ranges of one split, all half-open ``[start, stop)`` in table rows.

    ``lists[i]`` is training list ``i`` (its ``qid`` in the paper's SVMrank file is
    ``i + 1``); ``test`` is the test part; ``train_n`` is the paper's
    ``int(0.7 * n)`` and ``part`` the jobs per list.
    """

    lists: list[tuple[int, int]]
    test: tuple[int, int]
    train_n: int
    part: int


def training_size(n_jobs: int) -> int:
    """``int(n_jobs * 0.7)`` exactly as the report's code computes it (Python float product,
    truncated).

    This is **not** always ``n_jobs * 7 // 10``: ``0.7`` is stored as
    0.69999999999999995559..., so for about 2.4 % of the sizes the float product falls
    just below an integer (``90 * 0.7 == 62.99999999999999`` gives 62 where
    ``90 * 7 // 10`` gives 63; the first sizes are 90, 170, 180, 330, ...). We keep the
    paper's value so that list boundaries match the paper's files; IEEE-754 double
    multiplication is exactly rounded, so the result is the same on every platform.
    """
    if n_jobs < 0:
        raise ValueError(f"n_jobs must be >= 0, got {n_jobs}")
    return int(n_jobs * TRAIN_FRACTION)


def split_lists(n_jobs: int, k: int) -> Split:
    """Split ``n_jobs`` rows (file/submit order) into ``k`` training lists and a test part.

    ``train_n = int(0.7 * n_jobs)`` (see :func:`training_size`), ``part = train_n // k``;
    list ``i`` holds rows ``[i * part, (i + 1) * part)`` and the test part rows
    ``[part * k, n_jobs)``, so the ``train_n - part * k`` training rows that do not fill a
    whole list go to the test part, as in the seed.

    Raises :class:`InputError` (field ``lists``) when ``k < 1`` or when ``k > train_n``
    (a list would hold no job; the report's code would silently write empty files). One-job lists
    (``part == 1``) are allowed although they give no pair to learn from.
    """
    if k < 1:
        raise InputError(f"the number of training lists (K) must be at least 1, got {k}",
                         field="lists")
    train_n = training_size(n_jobs)
    if k > train_n:
        raise InputError(
            f"more lists (K={k}) than training jobs (train_n={train_n} = int(0.7 * "
            f"{n_jobs} jobs)): every list needs at least one job", field="lists")
    part = train_n // k
    lists = [(i * part, (i + 1) * part) for i in range(k)]
    return Split(lists=lists, test=(part * k, n_jobs), train_n=train_n, part=part)
