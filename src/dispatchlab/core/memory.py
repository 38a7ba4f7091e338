"""Give freed heap memory back to the operating system between the CLI's phases.

Loading a trace and simulating it free many small blocks that glibc's allocator keeps
for reuse; ``malloc_trim`` returns them, which lowers the command's peak RSS when the
output phase (pyarrow) comes next. A no-op where glibc is not the C library.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import gc


def release_free_memory() -> None:
    """Collect garbage cycles, then ask glibc to return free heap pages (if glibc)."""
    gc.collect()
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        trim = libc.malloc_trim
    except (OSError, AttributeError):
        return
    trim(0)
