"""``python -m dispatchlab.cli``: the same as the ``dispatchlab`` command."""

from dispatchlab.cli import run

if __name__ == "__main__":
    run()
