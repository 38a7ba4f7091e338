"""The small checks of a campaign file's tables, shared by
:mod:`~dispatchlab.experiment.campaign.config` and the ``[power]`` table's
:mod:`.power_table`: an error located at the file and entry
(:class:`_Where`), known keys, typed values, and paths of input files.

They sit below both modules, so the power table imports no part of the configuration
(no import cycle). Every error is one :class:`~dispatchlab.core.errors.InputError`
naming the campaign file and the entry (``traces[0]``, ``power``)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from dispatchlab.core.errors import InputError
from dispatchlab.core.references import expand_traces
from dispatchlab.core.suggest import did_you_mean, missing_file_hint


class _Where:
    """Error context: campaign file and entry name."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def error(self, message: str, entry: str) -> InputError:
        return InputError(message, file=str(self.path), field=entry)


def _unknown(word: str, allowed: set[str] | tuple[str, ...]) -> str:
    """``'word'`` followed by the closest allowed names, if any."""
    return f"{word!r}{did_you_mean(word, allowed)}"


def _check_keys(where: _Where, table: Any, allowed: set[str], entry: str) -> dict[str, Any]:
    """``table`` if it is a table with only ``allowed`` keys; else an error naming each
    unknown key with the closest allowed one."""
    if not isinstance(table, dict):
        raise where.error(f"expected a table, got {type(table).__name__}", entry)
    unknown = sorted(set(table) - allowed)
    if unknown:
        names = ", ".join(_unknown(k, allowed) for k in unknown)
        raise where.error(f"unknown key(s) {names}; allowed: {', '.join(sorted(allowed))}",
                          entry)
    return table


def _typed(where: _Where, table: dict, key: str, types: type | tuple, entry: str,
           default: Any = None) -> Any:
    """``table[key]`` (or ``default``) checked against ``types`` (a bool is not an int)."""
    value = table.get(key, default)
    if value is None:
        return None
    allowed = types if isinstance(types, tuple) else (types,)
    if (isinstance(value, bool) and bool not in allowed) or not isinstance(value, types):
        raise where.error(f"{key} must be {_type_names(allowed)}, got {value!r}", entry)
    return value


def _type_names(types: tuple) -> str:
    """``"an integer or a number"`` for ``(int, float)``."""
    return " or ".join({"int": "an integer", "float": "a number", "str": "a string",
                        "bool": "true or false", "list": "an array",
                        "dict": "a table"}.get(t.__name__, t.__name__) for t in types)


def _resolve(base: Path, text: str) -> Path:
    """A path from the campaign file: a leading ``$DISPATCHLAB_TRACES`` replaced by the
    traces folder (:func:`dispatchlab.core.references.traces_dir`), ``~`` expanded, relative
    to ``base``."""
    p = Path(expand_traces(text)).expanduser()
    return p if p.is_absolute() else (base / p)


def _existing_file(where: _Where, path: Path, what: str, entry: str) -> Path:
    """``path`` resolved, or an error with the nearest names in its folder."""
    if not path.exists():
        raise where.error(f"{what} not found: {path}{missing_file_hint(path)}", entry)
    if not path.is_file():
        raise where.error(f"{what} is not a file: {path}", entry)
    return path.resolve()
