"""User-facing errors.

Every mistake a user can make (a malformed trace line, an impossible request, a bad
configuration value) raises :class:`InputError`. The CLI prints it as exactly one line
on stderr and exits with status 2; it never shows a traceback for these.
"""

from __future__ import annotations

import sys
from pathlib import Path


class InputError(Exception):
    """A problem with user input, located as precisely as possible.

    ``str(err)`` reads ``FILE:LINE: field NAME: MESSAGE`` with the parts that are known.
    """

    def __init__(
        self,
        message: str,
        *,
        file: str | None = None,
        line: int | None = None,
        field: str | None = None,
    ) -> None:
        self.message = message
        self.file = file
        self.line = line
        self.field = field
        super().__init__(self.__str__())

    def __str__(self) -> str:
        where = ""
        if self.file is not None:
            where = str(self.file)
            if self.line is not None:
                where += f":{self.line}"
            where += ": "
        fld = f"field {self.field}: " if self.field is not None else ""
        return f"{where}{fld}{self.message}"


def output_folder(path: str | Path) -> Path:
    """Create ``path`` (and parents) for writing results; an OS failure is an
    :class:`InputError` naming the folder."""
    out = Path(path)
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise InputError(f"cannot create the output folder: {exc.strerror}",
                         file=str(out)) from None
    return out


def one_line(text: object, limit: int = 300) -> str:
    """``text`` as one line for an ``error:`` message: every run of white space (line
    breaks included) becomes one blank, characters that are not printable become
    ``?``, and more than ``limit`` characters are cut with ``...``. For library or parser
    texts quoted in a message (pyarrow's, DuckDB's), which may span several lines."""
    flat = " ".join(str(text).split())
    flat = "".join(c if c.isprintable() else "?" for c in flat)
    return flat if len(flat) <= limit else flat[:limit - 3] + "..."


def digit_limit_message(exc: ValueError) -> str | None:
    """The message for Python's integer-string limit hit by a parser (else None)."""
    if "Exceeds the limit" in str(exc) and "digits" in str(exc):
        return (f"holds an integer of more than {sys.get_int_max_str_digits():,} digits "
                "(far beyond any valid value)")
    return None


def parse_toml(text: str, source: str) -> dict:
    """``text`` parsed as TOML; invalid TOML and integers too long for Python to read
    (more than 4,300 digits) raise :class:`InputError` naming ``source``."""
    import tomllib

    try:
        return tomllib.loads(text)
    except ValueError as exc:  # tomllib.TOMLDecodeError is a ValueError
        message = digit_limit_message(exc) or f"invalid TOML: {one_line(exc)}"
        raise InputError(message, file=source) from None
