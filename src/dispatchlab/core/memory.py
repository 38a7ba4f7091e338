"""Give freed heap memory back to the operating system between the CLI's phases.

Loading a trace and simulating it free many small blocks that glibc's allocator keeps
for reuse; ``malloc_trim`` returns them, which lowers the command's peak RSS when the
output phase (pyarrow) comes next. A no-op where glibc is not the C library.
"""

from __future__ import annotations

import ctypes
import gc


def release_free_memory() -> None:
    """Collect garbage cycles, then ask glibc to return free heap pages (if glibc).

    ``malloc_trim`` is looked up among the symbols the process already has loaded
    (``dlopen(NULL)``, where the C library's are), not by searching for the C library
    (:func:`ctypes.util.find_library` imports :mod:`subprocess` and runs ``ldconfig``
    at every call: milliseconds of every command's start-up)."""
    gc.collect()
    try:
        trim = ctypes.CDLL(None).malloc_trim
    except (OSError, AttributeError):
        return
    trim(0)
