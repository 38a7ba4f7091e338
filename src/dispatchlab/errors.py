"""User-facing errors.

Every mistake a user can make (a malformed trace line, an impossible request, a bad
configuration value) raises :class:`InputError`. The CLI prints it as exactly one line
on stderr and exits with status 2; it never shows a traceback for these.
"""

from __future__ import annotations

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
