"""'Did you mean' suggestions for names a user typed (dispatchers, predictors, keys,
files).

:func:`did_you_mean` returns a short suffix for an error message, empty when nothing
is close enough; :func:`case_match` finds the one registered name equal to a typed
name ignoring case (``EASY`` -> ``easy``), which callers accept and store in its
canonical spelling.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path


def close_matches(word: str, choices: Iterable[str], n: int = 3,
                  cutoff: float = 0.6) -> list[str]:
    """Up to ``n`` of ``choices`` closest to ``word`` (case-insensitive comparison)."""
    import difflib  # (imported on a mistake only: start-up stays lean)

    options = list(dict.fromkeys(choices))
    lowered = {c.lower(): c for c in options}
    hits = difflib.get_close_matches(word.lower(), list(lowered), n=n, cutoff=cutoff)
    return [lowered[h] for h in hits]


def did_you_mean(word: str, choices: Iterable[str]) -> str:
    """``" (did you mean 'x'?)"`` / ``" (did you mean 'x' or 'y'?)"``, or ``""``."""
    hits = close_matches(word, choices)
    if not hits:
        return ""
    quoted = [repr(h) for h in hits]
    text = quoted[0] if len(quoted) == 1 else ", ".join(quoted[:-1]) + " or " + quoted[-1]
    return f" (did you mean {text}?)"


def case_match(word: str, choices: Iterable[str]) -> str | None:
    """The single choice equal to ``word`` ignoring case, else None."""
    hits = [c for c in choices if c.lower() == word.lower()]
    return hits[0] if len(hits) == 1 else None


def missing_file_hint(path: str | Path) -> str:
    """For a file that does not exist: the nearest names in its folder, as a
    ``" (did you mean ...?)"`` suffix, or ``""`` when the folder is missing or nothing
    is close."""
    p = Path(path)
    folder = p.parent if str(p.parent) else Path(".")
    try:
        names = [q.name for q in folder.iterdir()]
    except OSError:
        return ""
    hits = close_matches(p.name, names, cutoff=0.5)
    if not hits:
        return ""
    shown = [str(folder / h) if str(p.parent) not in ("", ".") else h for h in hits]
    text = " or ".join(repr(s) for s in shown)
    return f" (did you mean {text}?)"
