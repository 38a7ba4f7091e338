"""Slurm host lists (``cn[001-004],gpu01``): expand them to host names and back.

The syntax is the one Slurm prints in ``sacct``'s ``NodeList`` and accepts in
``slurm.conf`` (``NodeName=``, ``Nodes=``) and ``scontrol show hostnames``:

* a list is names separated by commas (blanks separate too; empty entries are
  skipped), commas inside brackets belong to the brackets: ``cn[1,3-5],gpu01`` is
  ``cn1 cn3 cn4 cn5 gpu01``;
* a name may hold bracket groups ``[...]``, each a comma list of numbers ``7`` and
  ranges ``3-5`` (low <= high); the text around and between the groups is copied:
  ``cn[1-2]-ib`` is ``cn1-ib cn2-ib``;
* leading zeros are kept: each number of a group is padded with zeros to the width of
  the number as written (the low end for a range): ``cn[001-002]`` is ``cn001 cn002``,
  ``cn[8-10]`` is ``cn8 cn9 cn10``, ``cn[08-10]`` is ``cn08 cn09 cn10``;
* several groups in one name give every combination, the leftmost group varying
  slowest: ``r[1-2]n[01-02]`` is ``r1n01 r1n02 r2n01 r2n02``;
* ``None assigned`` (what ``sacct`` prints for a job that never ran), ``(null)`` and
  an empty text are the empty list.

Anything else (an unclosed or nested bracket, a range whose high end is below its low
end, letters or an empty item inside brackets, ``]`` without ``[``) is an
:class:`~dispatchlab.core.errors.InputError` whose message quotes the list; the caller adds
the file, line and field. A list expanding to more than :data:`MAX_HOSTS` names is
refused too (a typo such as ``cn[1-100000000]`` must not fill the memory).

Duplicates are kept by :func:`expand` (Slurm's own hostlists are unique, so a
duplicate is the writer's: :func:`hosts` removes them).
"""

from __future__ import annotations

import re
from itertools import product

from dispatchlab.core.errors import InputError

__all__ = ["MAX_HOSTS", "compress", "expand", "hosts"]

#: The most names one list may expand to.
MAX_HOSTS = 1_000_000
#: Texts meaning "no host" (sacct prints ``None assigned`` for jobs that never ran).
EMPTY_LISTS = frozenset({"", "None assigned", "(null)"})

_SEPARATORS = ", \t\r\n"
_ITEM_RE = re.compile(r"([0-9]{1,18})(?:-([0-9]{1,18}))?", re.ASCII)
_TRAILING_DIGITS_RE = re.compile(r"^(.*?)([0-9]+)$", re.ASCII | re.DOTALL)


def _error(text: str, why: str) -> InputError:
    shown = text if len(text) <= 60 else text[:57] + "..."
    return InputError(f"not a Slurm host list ({why}): '{shown}'")


def _split(text: str) -> list[str]:
    """The entries of ``text``: split at separators outside brackets; brackets checked
    for balance and nesting."""
    entries, current, depth = [], [], 0
    for char in text:
        if char == "[":
            if depth:
                raise _error(text, "a '[' inside brackets")
            depth = 1
        elif char == "]":
            if not depth:
                raise _error(text, "a ']' without its '['")
            depth = 0
        elif not depth and char in _SEPARATORS:
            if current:
                entries.append("".join(current))
                current = []
            continue
        current.append(char)
    if depth:
        raise _error(text, "a '[' without its ']'")
    if current:
        entries.append("".join(current))
    return entries


def _group(body: str, text: str, budget: int) -> list[str]:
    """The numbers of one bracket group ``1,3-5,08`` as padded texts (at most
    ``budget`` of them)."""
    out: list[str] = []
    for item in body.split(","):
        m = _ITEM_RE.fullmatch(item.strip())
        if m is None:
            raise _error(text, f"'[{body}]' holds '{item}', not a number or a range N-M")
        low, high = m[1], m[2]
        if high is None:
            out.append(low)
            continue
        first, last = int(low), int(high)
        if last < first:
            raise _error(text, f"the range {low}-{high} ends below its start")
        if last - first >= budget - len(out):
            raise _error(text, f"more than {MAX_HOSTS:,} names")
        width = len(low)
        out.extend(str(k).zfill(width) for k in range(first, last + 1))
    return out


def _entry(entry: str, text: str, budget: int) -> list[str]:
    """The names of one entry ``pre[group]mid[group]post`` (cartesian product)."""
    if "[" not in entry:
        return [entry]
    parts = re.split(r"\[([^\]]*)\]", entry)  # text, group, text, group, ..., text
    choices: list[list[str]] = []
    size = 1
    for k, part in enumerate(parts):
        if k % 2 == 0:
            choices.append([part])
            continue
        numbers = _group(part, text, budget)
        size *= len(numbers)
        if size > budget:
            raise _error(text, f"more than {MAX_HOSTS:,} names")
        choices.append(numbers)
    return ["".join(combo) for combo in product(*choices)]


def expand(text: str) -> list[str]:
    """The host names of a Slurm host list, in the order written (see the module
    docstring for the syntax); ``[]`` for ``""``, ``None assigned`` and ``(null)``.

    >>> expand("cn[001-002],r[1-2]n[1,3]")
    ['cn001', 'cn002', 'r1n1', 'r1n3', 'r2n1', 'r2n3']

    Raises :class:`~dispatchlab.core.errors.InputError` for a malformed list.
    """
    text = text.strip()
    if text in EMPTY_LISTS:
        return []
    names: list[str] = []
    for entry in _split(text):
        names.extend(_entry(entry, text, MAX_HOSTS - len(names)))
        if len(names) > MAX_HOSTS:
            raise _error(text, f"more than {MAX_HOSTS:,} names")
    return names


def hosts(text: str) -> list[str]:
    """The distinct host names of a list, in first-appearance order (as :func:`expand`
    otherwise)."""
    return list(dict.fromkeys(expand(text)))


def compress(names: list[str] | tuple[str, ...]) -> str:
    """A Slurm host list naming exactly the distinct ``names`` (the inverse of
    :func:`expand` up to order and duplicates).

    Names ending in digits are grouped by the text before the digits and the number of
    digits; each group is written once, where its first name appears, with its numbers
    sorted and consecutive ones joined into ranges (``cn[001-003,007]``); a group of
    one name is written as the name. Other names are written as they are.

    >>> compress(["cn003", "cn001", "gpu1", "cn002", "login"])
    'cn[001-003],gpu1,login'

    Raises :class:`~dispatchlab.core.errors.InputError` for a name that cannot appear in a
    list (empty, or holding a separator or a bracket).
    """
    groups: dict[tuple[str, int], list[int]] = {}
    plain: dict[tuple[str, int], None] = {}
    order: list[tuple[str, int]] = []
    for name in names:
        if not name or any(c in name for c in _SEPARATORS + "[]"):
            raise InputError(f"not a host name for a Slurm host list: {name!r}")
        m = _TRAILING_DIGITS_RE.match(name)
        key = (m[1], len(m[2])) if m is not None else (name, -1)
        if key not in groups and key not in plain:
            order.append(key)
        if m is None:
            plain[key] = None
        else:
            groups.setdefault(key, []).append(int(m[2]))
    out = []
    for key in order:
        if key in plain:
            out.append(key[0])
            continue
        prefix, width = key
        numbers = sorted(set(groups[key]))
        if len(numbers) == 1:
            out.append(f"{prefix}{numbers[0]:0{width}d}")
            continue
        ranges, low = [], numbers[0]
        for prev, cur in zip(numbers, [*numbers[1:], None], strict=True):
            if cur is None or cur != prev + 1:
                ranges.append(f"{low:0{width}d}" if low == prev
                              else f"{low:0{width}d}-{prev:0{width}d}")
                low = cur if cur is not None else low
        out.append(f"{prefix}[{','.join(ranges)}]")
    return ",".join(out)
