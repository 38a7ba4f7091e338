"""``python -m dispatchlab.cli``: the same as the ``dispatchlab`` command."""

import sys

from dispatchlab.cli import main

if __name__ == "__main__":
    sys.exit(main())
