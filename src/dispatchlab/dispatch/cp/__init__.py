"""CP-SAT dispatchers (``hcp``, ``hcp-online``; ``pcp``, ``pcp-online`` in :mod:`.pcp`).

This package imports ``ortools``; ``import dispatchlab.dispatch`` does not import it
(the registry loads these classes lazily). Shared machinery is in :mod:`.common`.
"""

import sys

# OR-Tools imports pandas: lift the command line's "pandas is absent" mark
# (dispatchlab.cli._hide_pandas_from_pyarrow), when this is a command-line process
if "dispatchlab.cli" in sys.modules:
    sys.modules["dispatchlab.cli"].allow_pandas()
